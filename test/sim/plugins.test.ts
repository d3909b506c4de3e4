import { describe, expect, it } from 'vitest';
import type { SimEnvironment } from '../../src/sim/fleet.js';
import type { Simulator } from '../../src/sim/server.js';
import { useSimulator } from '../helpers/sim.js';
import { call, operation, runToEnd } from './http.js';

const start = useSimulator();

/** The simulator's clock, moved by the test: operations settle and the listing's lag passes only when it moves. */
function manualTime() {
  let t = Date.UTC(2026, 10, 25, 2, 14, 7);
  return { now: () => t, advance: (ms: number) => (t += ms) };
}

function listing(sim: Simulator, query = '') {
  return call(sim, 'GET', `/company/${sim.companyId}/wp-plugins${query}`);
}

/** An environment with a plugin behind its latest version, and that plugin's name. */
function behindOn(sim: Simulator): { env: SimEnvironment; name: string; latest: string } {
  for (const env of sim.fleet.environments.values()) {
    for (const [name, p] of env.plugins) {
      const latest = sim.fleet.pluginCatalog.get(name)!.versions.at(-1)!;
      if (p.version !== latest) return { env, name, latest };
    }
  }
  throw new Error('no plugin behind');
}

describe('the simulator’s plugins (beyond the spec)', () => {
  it('installs 5 to 40 plugins an environment by default, --plugins-per-env fixes the number; themes are unchanged', async () => {
    const { sim } = await start({ seed: 3, sites: 12 });
    const counts = [...sim.fleet.environments.values()].map((e) => e.plugins.size);
    expect(Math.min(...counts)).toBeGreaterThanOrEqual(5);
    expect(Math.max(...counts)).toBeLessThanOrEqual(40);
    const installs = [...sim.fleet.environments.values()].flatMap((e) => [...e.plugins.values()]);
    expect(new Set(installs.map((p) => p.status))).toEqual(new Set(['active', 'inactive']));
    const fixed = (await start({ seed: 3, sites: 12, pluginsPerEnv: 25 })).sim;
    for (const env of fixed.fleet.environments.values()) expect(env.plugins.size).toBe(25);
    expect([...fixed.fleet.environments.values()].map((e) => [...e.themes])).toEqual([...sim.fleet.environments.values()].map((e) => [...e.themes]));
    expect(sim.fleet.pluginCatalog.has('wordpress-seo')).toBe(true);
  });

  it('the company listing: plugins in name order, paged by offset and limit (capped), filtered by search, status and updatesAvailable', async () => {
    const { sim } = await start({ seed: 4, sites: 10, maxPageSize: 7, profile: 'spec' });
    const all: { name: string; environments: { id: string; plugin_status: string; plugin_update: string }[] }[] = [];
    for (let offset = 0; ; offset += 7) {
      const { status, body } = await listing(sim, `?offset=${offset}&limit=50`);
      expect(status).toBe(200);
      expect(body.company.plugins.items.length).toBeLessThanOrEqual(7);
      all.push(...body.company.plugins.items);
      if (offset + 7 >= body.company.plugins.total) break;
    }
    expect(all.map((p) => p.name)).toEqual([...sim.fleet.pluginCatalog.keys()].sort((a, b) => a.localeCompare(b)));
    const installs = [...sim.fleet.environments.values()].reduce((n, e) => n + e.plugins.size, 0);
    expect(all.reduce((n, p) => n + p.environments.length, 0)).toBe(installs);
    const seo = (await listing(sim, '?search=yoast')).body.company.plugins.items.map((p: { name: string }) => p.name);
    expect(seo).toEqual(['duplicate-post', 'wordpress-seo']); // titles "Yoast Duplicate Post", "Yoast SEO"
    const inactive = (await listing(sim, '?status=inactive&limit=100')).body.company.plugins.items;
    expect(inactive.length).toBeGreaterThan(0);
    for (const p of inactive) for (const e of p.environments) expect(e.plugin_status).toBe('inactive');
    const updates = (await listing(sim, '?column=updatesAvailable&limit=100')).body.company.plugins.items;
    for (const p of updates) {
      expect(p.environments.length).toBeGreaterThan(0);
      expect(p.update_count).toBe(p.environments.length);
      for (const e of p.environments) expect(e.plugin_update).toBe('available');
    }
  });

  it('entries carry the vulnerability flags of the installed version and of the update', async () => {
    const { sim } = await start({ seed: 5, sites: 20, pluginsPerEnv: 30, profile: 'spec' });
    const { body } = await listing(sim, '?limit=100');
    type Entry = {
      id: string;
      plugin_version: string;
      plugin_update_version: string;
      is_plugin_version_vulnerable: boolean;
      is_plugin_update_version_vulnerable: boolean;
    };
    const entries: [string, Entry][] = body.company.plugins.items.flatMap((p: { name: string; environments: Entry[] }) =>
      p.environments.map((e) => [p.name, e]),
    );
    for (const [name, e] of entries) {
      const item = sim.fleet.pluginCatalog.get(name)!;
      expect(e.is_plugin_version_vulnerable).toBe(item.vulnerable.has(e.plugin_version));
      expect(e.is_plugin_update_version_vulnerable).toBe(e.plugin_update_version !== '' && item.vulnerable.has(e.plugin_update_version));
    }
    expect(entries.some(([, e]) => e.is_plugin_version_vulnerable)).toBe(true);
    expect(entries.some(([, e]) => e.is_plugin_update_version_vulnerable)).toBe(true);
    expect(entries.some(([, e]) => e.plugin_update_version !== '' && !e.is_plugin_update_version_vulnerable)).toBe(true);
  });

  it('the listing modes: served with ids, absent (404), no-ids', async () => {
    const served = (await start({ seed: 6, sites: 3 })).sim;
    const withIds = (await listing(served, '?limit=100')).body.company.plugins.items.flatMap((p: { environments: { id?: string }[] }) => p.environments);
    expect(withIds.every((e: { id?: string }) => served.fleet.environments.has(e.id!))).toBe(true);
    const absent = (await start({ seed: 6, sites: 3, pluginListing: 'absent' })).sim;
    expect((await listing(absent)).status).toBe(404);
    expect((await call(absent, 'GET', `/sites/environments/${[...absent.fleet.environments.keys()][0]}/wp-plugins`)).status).toBe(200);
    const noIds = (await start({ seed: 6, sites: 3, pluginListing: 'no-ids' })).sim;
    const entries = (await listing(noIds, '?limit=100')).body.company.plugins.items.flatMap((p: { environments: object[] }) => p.environments);
    expect(entries.length).toBe(withIds.length);
    for (const e of entries) expect(e).not.toHaveProperty('id');
  });

  it('the environment listing is the environment’s plugins now, with the flags', async () => {
    const { sim } = await start({ seed: 7, sites: 3 });
    const env = [...sim.fleet.environments.values()][0]!;
    const { status, body } = await call(sim, 'GET', `/sites/environments/${env.id}/wp-plugins`);
    expect(status).toBe(200);
    expect(body.environment.id).toBe(env.id);
    const items = body.environment.plugins.items as { name: string; version: string; status: string; update: string; update_version: string | null }[];
    expect(items.map((p) => p.name)).toEqual([...env.plugins.keys()].sort((a, b) => a.localeCompare(b)));
    for (const p of items) {
      const latest = sim.fleet.pluginCatalog.get(p.name)!.versions.at(-1)!;
      expect(p).toMatchObject({ version: env.plugins.get(p.name)!.version, status: env.plugins.get(p.name)!.status });
      expect(p.update_version).toBe(p.version === latest ? null : latest);
    }
    expect((await call(sim, 'GET', '/sites/environments/nope/wp-plugins')).status).toBe(404);
  });

  it('the bulk update answers 200 with a wp-plugins:bulk-update operation that installs the newest version when it runs', async () => {
    const { sim } = await start({ seed: 8, sites: 4 });
    const { env, name, latest } = behindOn(sim);
    const { accepted, done } = await runToEnd(sim, 'PUT', `/sites/environments/${env.id}/plugins/bulk-update`, { plugins: [{ name }] });
    expect(accepted.status).toBe(200);
    expect(accepted.body).toMatchObject({ status: 200, message: expect.any(String) });
    expect(accepted.body.operation_id).toMatch(/^wp-plugins:bulk-update-[0-9a-f-]{36}$/);
    expect(done.body.status).toBe(200);
    expect(env.plugins.get(name)).toMatchObject({ version: latest, updateStatus: 'updated' });
    const missing = [...sim.fleet.pluginCatalog.keys()].find((p) => !env.plugins.has(p))!;
    const refused = await call(sim, 'PUT', `/sites/environments/${env.id}/plugins/bulk-update`, { plugins: [{ name: missing }] });
    expect(refused.status).toBe(400);
    expect(refused.body.message).toContain(`${missing} is not installed`);
  });

  it('pluginBulkOperationId: false answers 200 without an operation, the update already applied', async () => {
    const { sim } = await start({ seed: 8, sites: 4, pluginBulkOperationId: false });
    const { env, name, latest } = behindOn(sim);
    const { status, body } = await call(sim, 'PUT', `/sites/environments/${env.id}/plugins/bulk-update`, { plugins: [{ name }] });
    expect({ status, body }).toEqual({ status: 200, body: { message: 'Successfully updated WP plugins', status: 200 } });
    expect(env.plugins.get(name)!.version).toBe(latest);
    expect(sim.operations.all.size).toBe(0);
  });

  it('the pinned update answers 202 with wp-plugin:update and installs exactly that version; unknown versions and plugins are refused', async () => {
    const { sim } = await start({ seed: 9, sites: 4 });
    const { env, name } = behindOn(sim);
    const versions = sim.fleet.pluginCatalog.get(name)!.versions;
    const pinned = versions.find((v) => v !== env.plugins.get(name)!.version && v !== versions.at(-1)) ?? versions.at(-1)!;
    const { accepted, done } = await runToEnd(sim, 'PUT', `/sites/environments/${env.id}/plugins`, { name, update_version: pinned });
    expect(accepted.status).toBe(202);
    expect(accepted.body.operation_id).toMatch(/^wp-plugin:update-[0-9a-f-]{36}$/);
    expect(done.body.status).toBe(200);
    expect(env.plugins.get(name)!.version).toBe(pinned);
    const badVersion = await call(sim, 'PUT', `/sites/environments/${env.id}/plugins`, { name, update_version: '99.0.0' });
    expect(badVersion.status).toBe(400);
    const badName = await call(sim, 'PUT', `/sites/environments/${env.id}/plugins`, { name: 'no-such-plugin', update_version: '1.0.0' });
    expect(badName.status).toBe(400);
    expect((await call(sim, 'PUT', `/sites/environments/${env.id}/plugins`, { name })).status).toBe(400); // schema: update_version required
  });

  it('an unlicensed plugin: its bulk and pinned updates succeed and its version stays, in both listings; others still move', async () => {
    const probe = (await start({ seed: 9, sites: 4 })).sim;
    const { name } = behindOn(probe);
    const { sim } = await start({ seed: 9, sites: 4, unlicensedPlugins: [name] });
    const { env } = behindOn(sim);
    const was = env.plugins.get(name)!.version;
    const bulk = await runToEnd(sim, 'PUT', `/sites/environments/${env.id}/plugins/bulk-update`, { plugins: [{ name }] });
    expect(bulk.done.body.status).toBe(200);
    const latest = sim.fleet.pluginCatalog.get(name)!.versions.at(-1)!;
    const pinned = await runToEnd(sim, 'PUT', `/sites/environments/${env.id}/plugins`, { name, update_version: latest });
    expect(pinned.done.body.status).toBe(200);
    expect(env.plugins.get(name)!.version).toBe(was);
    const own = (await call(sim, 'GET', `/sites/environments/${env.id}/wp-plugins`)).body.environment.plugins.items as { name: string; version: string }[];
    expect(own.find((p) => p.name === name)).toMatchObject({ version: was, update_version: latest });
    const other = [...env.plugins.keys()].find((n) => n !== name && env.plugins.get(n)!.version !== sim.fleet.pluginCatalog.get(n)!.versions.at(-1));
    expect(other).toBeDefined();
    await runToEnd(sim, 'PUT', `/sites/environments/${env.id}/plugins/bulk-update`, { plugins: [{ name: other! }] });
    expect(env.plugins.get(other!)!.version).toBe(sim.fleet.pluginCatalog.get(other!)!.versions.at(-1));
    await expect(start({ seed: 9, sites: 4, unlicensedPlugins: ['no-such-plugin'] })).rejects.toThrow(/no-such-plugin.*not in the plugin catalogue/);
  });

  it('a backup keeps the plugins and a restore puts them back', async () => {
    const { sim } = await start({ seed: 10, sites: 4 });
    const { env, name } = behindOn(sim);
    const before = structuredClone([...env.plugins]);
    await runToEnd(sim, 'POST', `/sites/environments/${env.id}/manual-backups`, { tag: 'before plugins' });
    const backupId = env.backups.at(-1)!.id;
    await runToEnd(sim, 'PUT', `/sites/environments/${env.id}/plugins/bulk-update`, { plugins: [{ name }] });
    expect([...env.plugins]).not.toEqual(before);
    const { done } = await runToEnd(sim, 'POST', `/sites/environments/${env.id}/backups/restore`, { backup_id: backupId });
    expect(done.body.status).toBe(200);
    expect([...env.plugins]).toEqual(before);
  });

  it('with a lag, the company listing shows the plugins as they were until the lag passes on the sim’s clock; the environment listing is current', async () => {
    const clock = manualTime();
    const lagMs = 12 * 3_600_000;
    const { sim } = await start({ seed: 11, sites: 4, now: clock.now, operationDelayMs: 50, operationVisibleAfterMs: 0, pluginListingLagMs: lagMs });
    const { env, name, latest } = behindOn(sim);
    const old = env.plugins.get(name)!.version;
    const listed = async () => {
      const { body } = await listing(sim, `?search=${name}&limit=100`);
      const item = body.company.plugins.items.find((p: { name: string }) => p.name === name);
      return item.environments.find((e: { id: string }) => e.id === env.id).plugin_version as string;
    };
    const accepted = await call(sim, 'PUT', `/sites/environments/${env.id}/plugins/bulk-update`, { plugins: [{ name }] });
    clock.advance(50);
    expect((await operation(sim, accepted.body.operation_id as string)).body.status).toBe(200);
    const current = (await call(sim, 'GET', `/sites/environments/${env.id}/wp-plugins`)).body.environment.plugins.items;
    expect(current.find((p: { name: string }) => p.name === name).version).toBe(latest);
    expect(await listed()).toBe(old);
    clock.advance(lagMs - 1);
    expect(await listed()).toBe(old);
    clock.advance(1);
    expect(await listed()).toBe(latest);
    expect(sim.pluginListingLag?.held).toBe(0); // what it kept is dropped once the lag passed
  });

  it('the real profile answers the listing with null updates where none is available, as the theme listing', async () => {
    const { sim } = await start({ seed: 12, sites: 4, profile: 'real' });
    const entries = (await listing(sim, '?limit=100')).body.company.plugins.items.flatMap((p: { environments: object[] }) => p.environments);
    const none = entries.filter((e: { plugin_update: string | null }) => e.plugin_update !== 'available');
    expect(none.length).toBeGreaterThan(0);
    for (const e of none) expect(e).toMatchObject({ plugin_update: null, plugin_update_version: null, is_plugin_update_version_vulnerable: null });
  });

  it('lists 50,000 installs (2000 environments, 25 plugins each) and pages the listing', async () => {
    const { sim } = await start({ seed: 13, sites: 1200, pluginsPerEnv: 25 });
    const installs = [...sim.fleet.environments.values()].reduce((n, e) => n + e.plugins.size, 0);
    expect(installs).toBeGreaterThan(40_000);
    const { status, body } = await listing(sim, '?offset=0&limit=5');
    expect(status).toBe(200);
    expect(body.company.plugins.items).toHaveLength(5);
  });
});
