import { request } from 'undici';
import { describe, expect, it } from 'vitest';
import { installEffect } from '../../src/sim/item-install.js';
import { generateFleet } from '../../src/sim/fleet.js';
import { useSimulator } from '../helpers/sim.js';
import { runToEnd } from './http.js';

const start = useSimulator();

describe('WP-CLI puts an item back by its own files (wp plugin|theme install --version --force)', () => {
  it('moves only a catalogued version, and writes over an installed item only with --force', () => {
    const fleet = generateFleet({ seed: 3, sites: 2, themes: 4, pluginsPerEnv: 4 });
    const env = [...fleet.environments.values()][0]!;
    const [name, item] = [...env.plugins.entries()][0]!;
    const versions = fleet.pluginCatalog.get(name)!.versions;
    const run = (command: string) => installEffect(fleet, env, command.split(' '));
    expect(run(`wp plugin install ${name} --version=${versions[0]} --force`)).toEqual({ item: { kind: 'plugin', name, version: versions[0] } });
    // Without --force WP-CLI leaves an installed plugin as it is.
    expect(run(`wp plugin install ${name} --version=${versions[0]}`)).toEqual({});
    expect(run(`wp plugin install ${name} --version=0.0.0-gone --force`)).toEqual({ failsWith: 'Error: Download failed.' });
    expect(run('wp plugin install no-such-plugin --version=1.0.0 --force')).toEqual({ failsWith: 'Error: No plugins installed.' });
    expect(run('wp core version')).toBeUndefined();
    expect(item.version).toBeDefined();
  });

  it("over the API: the plugin moves back, its data (a shop's orders) stays; a backup restore loses the orders made since it", async () => {
    const { sim } = await start({ sites: 2, pluginsPerEnv: 4, seed: 3, operationDelayMs: 10 });
    const env = [...sim.fleet.environments.values()].find((e) => e.domains.length > 0)!;
    const domain = env.domains[0]!.name;
    const [name] = [...env.plugins.keys()];
    const old = sim.fleet.pluginCatalog.get(name!)!.versions[0]!;
    sim.openShop(domain, 3);
    const visit = () => request(sim.siteUrl.replace('{{domain}}', domain)).then((r) => r.body.text());
    const backup = await runToEnd(sim, 'POST', `/sites/environments/${env.id}/manual-backups`, { tag: 'before' });
    expect(backup.done.status).toBe(200);
    await visit();
    expect(env.orders).toBe(3);
    const cli = await runToEnd(sim, 'POST', `/sites/environments/${env.id}/run-wp-cli-command`, {
      wp_command: `wp plugin install ${name} --version=${old} --force`,
    });
    expect(cli.done.body.status).toBe(200);
    expect(env.plugins.get(name!)!.version).toBe(old);
    expect(env.orders).toBe(3);
    const id = env.backups.find((b) => b.note === 'before')!.id;
    await runToEnd(sim, 'POST', `/sites/environments/${env.id}/backups/restore`, { backup_id: id });
    expect(env.orders).toBe(0);
  });
});
