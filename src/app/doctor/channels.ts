import { lookup } from 'node:dns/promises';
import { accessSync, constants } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { SitefleetError, UsageError } from '../../errors.js';
import { metricsFile, pingUrl, webhook } from '../../notify/channels.js';
import { loadPlaybook } from '../../playbook/load.js';
import type { Playbook } from '../../playbook/types.js';
import { checkOutputs } from '../../util/output-file.js';
import { refName } from '../../util/secret-ref.js';
import type { Io } from '../io.js';
import type { Check } from './check.js';

/** Where doctor finds the run's channels: the playbook it is given, and the flags a run would take. */
export interface ChannelOptions {
  ping?: string;
  metricsFile?: string;
}

/** The playbook doctor is given, loaded as `validate` loads it (an unset variable is a check's failure, not an exit 2). */
export function doctorPlaybook(file: string, env: Io['env']): { playbook?: Playbook; checks: Check[] } {
  try {
    return { playbook: loadPlaybook(file, { env }), checks: [{ check: 'playbook', status: 'ok', detail: `${file} is valid` }] };
  } catch (error) {
    if (!(error instanceof SitefleetError)) throw error;
    return { checks: [{ check: 'playbook', status: 'fail', detail: `${file}: ${error.message}` }] };
  }
}

/**
 * Each channel a run would tell, checked without telling it: its URL is set and parses, its host
 * resolves, the secret its signature needs is set, the metrics file can be written. Nothing is sent,
 * and no URL (nor host) is shown: they are secrets.
 */
export async function channelChecks(playbook: Playbook | undefined, opts: ChannelOptions, env: Io['env']): Promise<Check[]> {
  const source = { flags: opts, settings: playbook?.settings, env };
  const checks: Check[] = [];
  // Resolved as a run resolves them (notify/channels.ts), so doctor says what the run would meet.
  const ping = opts.ping ?? playbook?.settings.ping;
  if (ping !== undefined) checks.push(await urlCheck('ping', opts.ping !== undefined ? '--ping' : 'settings.ping', ping, () => pingUrl(source)!));
  for (const [i, hook] of (playbook?.settings.notify ?? []).entries()) {
    const check = await urlCheck(`webhook ${i + 1}`, `settings.notify.${i}.url`, hook.url, () => webhook(hook, i, env).url);
    const secret = hook.secret === undefined ? undefined : refName(hook.secret);
    checks.push(
      check.status === 'ok'
        ? { ...check, detail: `${check.detail}; ${hook.format ?? 'json'}, on ${hook.on ?? 'failure'}${secret ? `, signed with ${secret}` : ''}` }
        : check,
    );
  }
  const metrics = metricsFile(source);
  if (metrics !== undefined) checks.push(metricsCheck(metrics));
  return checks;
}

/** A channel's URL resolved (or why not, as the run would say it), then its host looked up; nothing is sent, no URL shown. */
async function urlCheck(check: string, where: string, text: string, resolve: () => URL): Promise<Check> {
  const name = refName(text);
  const source = name ? `${where} (${name})` : where;
  let url: URL;
  try {
    url = resolve();
  } catch (error) {
    if (!(error instanceof UsageError)) throw error;
    return { check, status: 'fail', detail: error.message };
  }
  try {
    await lookup(url.hostname);
  } catch (error) {
    return { check, status: 'fail', detail: `${source}: its host does not resolve (${(error as NodeJS.ErrnoException).code ?? 'lookup failed'})` };
  }
  return { check, status: 'ok', detail: `${source}: an ${url.protocol.slice(0, -1)} URL whose host resolves (nothing sent)` };
}

function metricsCheck(path: string): Check {
  const check = 'metrics file';
  try {
    accessSync(dirname(resolve(path)), constants.W_OK);
    checkOutputs([{ flag: 'metrics file', path, kind: 'metrics' }], []);
    return { check, status: 'ok', detail: `${resolve(path)} can be written` };
  } catch (error) {
    return { check, status: 'fail', detail: `${resolve(path)}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}` };
  }
}
