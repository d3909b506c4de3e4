import { Option, type Command } from 'commander';
import type { GlobalOptions } from '../../app/runtime.js';
import { KINDS, nameOf, itemOf } from '../../inventory/kinds.js';
import type { Quarantined } from '../../inventory/quarantine-table.js';
import type { RetryFailure } from '../../inventory/retry-table.js';
import { jsonText, terminalMessage } from '../../util/safe-text.js';

interface ListOptions {
  format: 'text' | 'json';
}

const formatOption = () => new Option('--format <format>', 'output format').choices(['text', 'json']).default('text');
const kindOption = () => new Option('--kind <kind>', 'the kind of item, where a name is held as two (a theme and a plugin)').choices([...KINDS]);

/**
 * `sitefleet quarantine list|release` and `sitefleet retry list|clear`: what the company's runs left
 * alone for later (a version that broke a site; a write that failed for a reason that may pass), in the
 * state folder or in Redis with --coordination, and the one command that lets each go.
 */
export function registerQuarantine(program: Command): void {
  const quarantine = program
    .command('quarantine')
    .description('item versions that broke a site: sent nowhere in the company until released (or a newer version is offered)');
  quarantine
    .command('list')
    .description('every quarantined item version, with when, where and why it broke a site')
    .addOption(formatOption())
    .action(async (opts: ListOptions, command: Command) => {
      const globals = command.optsWithGlobals<GlobalOptions>();
      const { listQuarantine } = await import('../../app/withheld-commands.js');
      const held = await listQuarantine(globals);
      globals.io.stdout.write(opts.format === 'json' ? `${jsonText(held.map(quarantinedJson), 2)}\n` : quarantinedText(held));
    });
  quarantine
    .command('release <name@version>')
    .description('let a quarantined version be sent again, on every environment, from the next run')
    .addOption(kindOption())
    .action(async (spec: string, opts: { kind?: string }, command: Command) => {
      const globals = command.optsWithGlobals<GlobalOptions>();
      const { parseItemVersion, releaseQuarantine } = await import('../../app/withheld-commands.js');
      const q = await releaseQuarantine(globals, parseItemVersion(spec, opts.kind));
      const where = q.env_ids.length === 1 ? 'the site it broke' : `the ${q.env_ids.length} sites it broke`;
      globals.io.stdout.write(`${terminalMessage(`released ${q.kind} ${q.name}@${q.version}: the next runs send it again, ${where} included`)}\n`);
    });
  const retry = program.command('retry').description('item updates that failed for a reason that may pass, waiting their backoff (settings.retry_backoff)');
  retry
    .command('list')
    .description('every item update waiting to be tried again, per environment, with its failures')
    .addOption(formatOption())
    .action(async (opts: ListOptions, command: Command) => {
      const globals = command.optsWithGlobals<GlobalOptions>();
      const { listRetries } = await import('../../app/withheld-commands.js');
      const failures = await listRetries(globals);
      globals.io.stdout.write(opts.format === 'json' ? `${jsonText(failures.map(failureJson), 2)}\n` : failuresText(failures));
    });
  retry
    .command('clear <name@version>')
    .description('send an update that waits its backoff again from the next run, on every environment')
    .addOption(kindOption())
    .action(async (spec: string, opts: { kind?: string }, command: Command) => {
      const globals = command.optsWithGlobals<GlobalOptions>();
      const { clearRetry, parseItemVersion } = await import('../../app/withheld-commands.js');
      const arg = parseItemVersion(spec, opts.kind);
      const cleared = await clearRetry(globals, arg);
      const envs = new Set(cleared.map((f) => f.env_id)).size;
      const kind = itemOf(cleared[0]!)!.kind;
      globals.io.stdout.write(
        `${terminalMessage(`cleared ${kind} ${arg.name}@${arg.version} on ${envs} environment${envs === 1 ? '' : 's'}: the next runs send it again`)}\n`,
      );
    });
}

const iso = (at: number) => new Date(at).toISOString();

/** JSON keeps the service's text exactly (safe-text: JSON outputs keep it). */
function quarantinedJson(q: Quarantined) {
  const { first } = q;
  return {
    kind: q.kind,
    name: q.name,
    version: q.version,
    since: iso(first.at),
    env_id: first.env_id,
    site: first.site ?? null,
    environment: first.environment ?? null,
    environments: q.env_ids.length,
    env_ids: q.env_ids,
    why: first.why,
  };
}

function quarantinedText(held: readonly Quarantined[]): string {
  if (held.length === 0) return 'nothing is quarantined\n';
  return held
    .map((q) => {
      const where = `${q.first.site ?? q.first.env_id}${q.first.environment ? `/${q.first.environment}` : ''}`;
      const more = q.env_ids.length > 1 ? ` (and ${q.env_ids.length - 1} more)` : '';
      return `${terminalMessage(`${q.kind} ${q.name}@${q.version}: broke ${where}${more} at ${iso(q.first.at)}: ${q.first.why}`)}\n`;
    })
    .join('');
}

function failureJson(f: RetryFailure) {
  const { kind, name } = itemOf(f)!;
  return {
    kind,
    name,
    version: f.version,
    env_id: f.env_id,
    site: f.site ?? null,
    environment: f.environment ?? null,
    run_id: f.run,
    failed_at: iso(f.at),
    why: f.why,
  };
}

function failuresText(failures: readonly RetryFailure[]): string {
  if (failures.length === 0) return 'nothing is waiting to be tried again\n';
  return failures
    .map((f) => {
      const where = `${f.site ?? f.env_id}${f.environment ? `/${f.environment}` : ''}`;
      return `${terminalMessage(`${itemOf(f)!.kind} ${nameOf(f)}@${f.version} on ${where}: failed at ${iso(f.at)}: ${f.why}`)}\n`;
    })
    .join('');
}
