import type { SshConfig } from '../../api/types.js';
import { InvalidInputError, readingFirst, UsageError } from '../../errors.js';
import type { Environment } from '../../inventory/inventory.js';
import { inventoryReader, readInventory } from '../../inventory/read.js';
import { attachSiteIds, loadSitesFile } from '../../inventory/sites.js';
import { matches } from '../../plan/select.js';
import type { GlobalOptions } from '../../app/runtime.js';
import { withRuntime } from '../../app/run-scope.js';
import { selectorFrom, type SelectorFlags } from '../selector-flags.js';
import { forTerminal, jsonText, sshToken, terminalName } from '../../util/safe-text.js';

export interface SshConfigOptions extends SelectorFlags {
  format: 'ssh' | 'json';
}

/**
 * `Host acme-shop-live`: a name ssh takes, from the site and environment names. It never starts with
 * a dash (`ssh -x…` would be an option) or a dot.
 */
export function hostAlias(env: Pick<Environment, 'site' | 'name'>): string {
  return `${env.site}-${env.name}`.replace(/[^A-Za-z0-9._-]+/g, '-').replace(/^[-.]+/, '') || 'environment';
}

/**
 * One OpenSSH client config block, from the fields the service answers (`host`, `port`, `user`, with
 * their nested twins as fallback), or why it is not written: every value must be a plain token.
 */
export function sshBlock(env: Pick<Environment, 'site' | 'name'>, c: SshConfig): { block: string } | { refused: string } {
  const fields = [
    sshToken('HostName', c.host || c.site?.environment?.activeContainer?.loadBalancer?.extIP),
    sshToken('Port', c.port || c.site?.environment?.activeContainer?.lxdSshPort),
    sshToken('User', c.user || c.site?.usr),
  ];
  const refused = fields.flatMap((f) => ('refused' in f ? [f.refused] : []));
  if (refused.length) return { refused: refused.join('; ') };
  const [host, port, user] = fields.map((f) => ('value' in f ? f.value : ''));
  return { block: [`Host ${hostAlias(env)}`, `  HostName ${host}`, `  Port ${port}`, `  User ${user}`, ''].join('\n') };
}

/**
 * The blocks of a config, and a warning for each environment left out: a field that is not a plain
 * token, or a Host alias another environment has already (ssh takes the first match, so the second
 * would connect to the first one's server).
 */
export function sshConfig(configs: { env: Pick<Environment, 'site' | 'name'>; config: SshConfig }[]): { blocks: string[]; warnings: string[] } {
  const blocks: string[] = [];
  const warnings: string[] = [];
  const aliases = new Map<string, string>();
  for (const { env, config } of configs) {
    const where = terminalName(`${env.site}/${env.name}`);
    const alias = hostAlias(env);
    const made = sshBlock(env, config);
    const taken = aliases.get(alias);
    if ('refused' in made) warnings.push(`${where}: the service's ${made.refused}; its block is left out`);
    else if (taken !== undefined) warnings.push(`${where}: its Host alias ${alias} is ${taken}'s already; its block is left out`);
    else {
      aliases.set(alias, where);
      blocks.push(made.block);
    }
  }
  return { blocks, warnings };
}

/** Prints the config (or its JSON) and returns the exit code: 1 when some environment's block was left out. */
export async function printSshConfig(globals: GlobalOptions, opts: SshConfigOptions): Promise<number> {
  if (!globals.company) throw new InvalidInputError([{ path: 'company', message: 'no company: set SITEFLEET_COMPANY or pass --company' }]);
  if (!globals.sites)
    throw new UsageError('ssh-config needs site ids, which the theme listing does not carry: pass --sites FILE (YAML or CSV of site name, site id)');
  const sites = loadSitesFile(globals.sites);
  const company = globals.company;
  return withRuntime(globals, company, async (runtime) => {
    const inventory = await readingFirst({ baseUrl: globals.baseUrl, company }, () => readInventory(inventoryReader(runtime.caller), company));
    attachSiteIds(inventory, sites);
    const selected = inventory.environments.filter((e) => matches(e, selectorFrom(opts)));
    if (opts.site?.length && selected.length === 0) throw new UsageError(`no site in this fleet matches ${opts.site.map((s) => JSON.stringify(s)).join(', ')}`);
    const missing = [...new Set(selected.filter((e) => !e.site_id).map((e) => e.site))];
    if (missing.length)
      throw new UsageError(
        `no site id for ${missing.slice(0, 5).join(', ')}${missing.length > 5 ? ` and ${missing.length - 5} more` : ''}: add them to ${globals.sites}`,
      );
    const configs = await Promise.all(
      selected.map(async (env) => ({ env, config: await runtime.caller.read('getSshConfig', { site_id: env.site_id!, env_id: env.id }) })),
    );
    if (opts.format === 'json') {
      const raw = configs.map(({ env, config }) => ({ site: env.site, environment: env.name, env_id: env.id, site_id: env.site_id, config }));
      globals.io.stdout.write(`${jsonText(raw, 2)}\n`);
      return 0;
    }
    const { blocks, warnings } = sshConfig(configs);
    globals.io.stdout.write(`# sitefleet ssh-config: ${blocks.length} environments of company ${forTerminal(company)}\n\n${blocks.join('\n')}`);
    for (const w of warnings) globals.io.stderr.write(`sitefleet: warning: ${w}\n`);
    if (warnings.length)
      globals.io.stderr.write(
        `sitefleet: ${warnings.length} of ${configs.length} environments left out of the config; the rest is safe to use (--format json shows what the service sent)\n`,
      );
    return warnings.length ? 1 : 0;
  });
}
