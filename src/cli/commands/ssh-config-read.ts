import type { SshConfig } from '../../api/types.js';
import { InvalidInputError, UsageError } from '../../errors.js';
import type { Environment } from '../../inventory/inventory.js';
import { inventoryReader, readInventory } from '../../inventory/read.js';
import { attachSiteIds, loadSitesFile } from '../../inventory/sites.js';
import { matches } from '../../plan/select.js';
import { openRuntime, type GlobalOptions } from '../context.js';
import { selectorFrom } from '../selector-flags.js';
import type { SshConfigOptions } from './ssh-config.js';

/** `Host acme-shop-live`: a name ssh takes, from the site and environment names. */
export function hostAlias(env: Pick<Environment, 'site' | 'name'>): string {
  return `${env.site}-${env.name}`.replace(/[^A-Za-z0-9._-]+/g, '-');
}

/** One OpenSSH client config block, from the fields the service answers (`host`, `port`, `user`, with their nested twins as fallback). */
export function sshBlock(env: Pick<Environment, 'site' | 'name'>, c: SshConfig): string {
  const host = c.host || c.site?.environment?.activeContainer?.loadBalancer?.extIP;
  const port = c.port || c.site?.environment?.activeContainer?.lxdSshPort;
  const user = c.user || c.site?.usr;
  return [`Host ${hostAlias(env)}`, `  HostName ${host}`, `  Port ${port}`, `  User ${user}`, ''].join('\n');
}

export async function printSshConfig(globals: GlobalOptions, opts: SshConfigOptions): Promise<void> {
  if (!globals.company) throw new InvalidInputError([{ path: 'company', message: 'no company: set SITEFLEET_COMPANY or pass --company' }]);
  if (!globals.sites)
    throw new UsageError('ssh-config needs site ids, which the theme listing does not carry: pass --sites FILE (YAML or CSV of site name, site id)');
  const sites = loadSitesFile(globals.sites);
  const runtime = await openRuntime(globals, globals.company);
  try {
    const inventory = await readInventory(inventoryReader(runtime.caller), globals.company);
    attachSiteIds(inventory, sites);
    const selected = inventory.environments.filter((e) => matches(e, selectorFrom(opts)));
    if (opts.site?.length && selected.length === 0) throw new UsageError(`no site in this fleet matches ${opts.site.map((s) => JSON.stringify(s)).join(', ')}`);
    const missing = [...new Set(selected.filter((e) => !e.site_id).map((e) => e.site))];
    if (missing.length)
      throw new UsageError(
        `no site id for ${missing.slice(0, 5).join(', ')}${missing.length > 5 ? ` and ${missing.length - 5} more` : ''}: add them to ${globals.sites}`,
      );
    const configs = await Promise.all(
      selected.map(async (env) => ({ env, config: await runtime.caller.read<SshConfig>('getSshConfig', { site_id: env.site_id!, env_id: env.id }) })),
    );
    if (opts.format === 'json') {
      process.stdout.write(
        `${JSON.stringify(
          configs.map(({ env, config }) => ({ site: env.site, environment: env.name, env_id: env.id, site_id: env.site_id, config })),
          null,
          2,
        )}\n`,
      );
    } else {
      process.stdout.write(
        `# sitefleet ssh-config: ${configs.length} environments of company ${globals.company}\n\n${configs.map(({ env, config }) => sshBlock(env, config)).join('\n')}`,
      );
    }
  } finally {
    await runtime.close();
  }
}
