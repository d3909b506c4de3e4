import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { Report } from '../../src/report/report.js';
import { restoreBound } from '../../src/run/life/isolation.js';
import { isolationFacts } from '../../src/report/isolation-lines.js';
import { runCli, simEnv, tempDir, writePlaybook } from '../helpers/cli.js';
import { busiestPlugin, offeredPlugins, requestsTo } from '../helpers/plugins.js';
import { useSimulator } from '../helpers/sim.js';
import { isolatingNight } from '../helpers/isolate.js';

const start = useSimulator();

/** Orders each fresh page a shop serves places. */
const PER_VISIT = 7;

describe('isolation rounds put back by the items’ own files (health.undo: items_first, issue 55 item 2)', () => {
  it('a plugin breaking shops among a bulk write’s: found in rounds that go back by files; no backup restored, none taken for a round, every order kept', async () => {
    // Quiet logs: no suspect named, so isolation halves the candidates over several rounds.
    const { sim } = await start({ sites: 3, pluginsPerEnv: 8, seed: 5, operationDelayMs: 20, clearCacheGapMs: 0, quietBreaks: true });
    const { plugin, envs } = busiestPlugin(sim);
    const offered = offeredPlugins(sim).filter((o) => !o.vulnerableUpdate);
    const latest = sim.fleet.pluginCatalog.get(plugin)!.versions.at(-1)!;
    const shops = envs.map((id) => sim.fleet.environments.get(id)!).filter((e) => offered.filter((o) => o.env === e.id).length > 2);
    expect(shops.length).toBeGreaterThan(0);
    for (const env of shops) sim.openShop(env.domains[0]!.name, PER_VISIT);
    sim.breakPlugin(`${plugin}@${latest}`);
    const yaml = isolatingNight(sim).replace('on_broken: isolate }', 'on_broken: isolate, undo: items_first }');
    expect(yaml).toContain('undo: items_first');
    const dir = tempDir();
    const reportPath = join(dir, 'r.json');
    const res = await runCli(['run', writePlaybook(yaml, dir), '--yes', '--poll-interval', '20', '--report', reportPath], simEnv(sim));
    expect(res.code, res.stdout + res.stderr).toBe(1);
    const report = JSON.parse(readFileSync(reportPath, 'utf8')) as Report;
    // No restore, and no backup but each written environment's own restore point.
    const written = new Set(offered.map((o) => o.env).filter((id) => sim.fleet.environments.get(id)!.displayName === 'live'));
    expect(requestsTo(sim, 'addManualBackup')).toHaveLength(written.size);
    for (const env of shops) {
      const w = report.results.find((r) => r.target.env_id === env.id && r.request?.method === 'PUT')!;
      const n = offered.filter((o) => o.env === env.id).length;
      const old = offered.find((o) => o.env === env.id && o.name === plugin)!.version;
      expect(w, JSON.stringify(w).slice(0, 2000)).toMatchObject({
        status: 'failed',
        undone: { status: 'succeeded', health: { outcome: 'healthy' } },
        isolation: { outcome: 'found', culprits: [{ plugin, from: old, to: latest }], restores: 0 },
      });
      const rounds = w.isolation!.rounds;
      expect(rounds.length).toBeGreaterThan(1);
      expect(rounds.every((r) => r.by_items === true && r.restore_point === undefined && r.backup === undefined)).toBe(true);
      // Each broken round went back by its own items' files, and the site was healthy again.
      for (const r of rounds.filter((x) => x.status === 'broken'))
        expect(r.undone, JSON.stringify(r)).toMatchObject({ status: 'succeeded', health: { outcome: 'healthy' } });
      expect(rounds.filter((x) => x.status === 'broken').length + 1).toBeLessThanOrEqual(restoreBound(n));
      expect(w.reason).toMatch(/put-backs? by the items' files/);
      // The culprit on its old version, every other update in, and every order the shop took kept.
      expect(env.plugins.get(plugin)!.version).toBe(old);
      for (const o of offered.filter((o) => o.env === env.id && o.name !== plugin)) expect(env.plugins.get(o.name)!.version, o.name).toBe(o.latest);
      const taken = sim.siteLog.filter((v) => v.domain === env.domains[0]!.name && v.status === 200 && !v.cached).length * PER_VISIT;
      expect(env.orders).toBe(taken);
    }
    expect(requestsTo(sim, 'restoreBackup')).toEqual([]);
  });

  it('a round its files cannot heal goes back to the write’s restore point: isolation stops, and what the report says is in is on the site', async () => {
    // p3 1.1.0 breaks the site and its 1.0.0 is no longer served (so its files cannot be put back); quiet logs, so
    // the rounds halve in order: p0 and p1 go in healthy, then p2, then p3 alone breaks it, and the restore of
    // the point taken before the write undoes p0, p1 and p2 too.
    const { sim } = await start({ sites: 2, seed: 5, operationDelayMs: 20, clearCacheGapMs: 0, quietBreaks: true });
    const names = ['p0', 'p1', 'p2', 'p3'];
    sim.fleet.pluginCatalog.clear();
    for (const name of names)
      sim.fleet.pluginCatalog.set(name, { name, title: name, versions: name === 'p3' ? ['1.1.0'] : ['1.0.0', '1.1.0'], vulnerable: new Set() });
    const live = [...sim.fleet.environments.values()].find((e) => e.displayName === 'live')!;
    for (const env of sim.fleet.environments.values()) env.plugins.clear();
    for (const name of names) live.plugins.set(name, { version: '1.0.0', status: 'active', updateStatus: 'none', autoUpdateType: 'none' });
    sim.breakPlugin('p3@1.1.0');
    const yaml = isolatingNight(sim).replace('on_broken: isolate }', 'on_broken: isolate, undo: items_first }');
    const dir = tempDir();
    const reportPath = join(dir, 'r.json');
    const res = await runCli(['run', writePlaybook(yaml, dir), '--yes', '--poll-interval', '20', '--report', reportPath], simEnv(sim));
    expect(res.code, res.stdout + res.stderr).toBe(1);
    const w = (JSON.parse(readFileSync(reportPath, 'utf8')) as Report).results.find((r) => r.target.env_id === live.id && r.request?.method === 'PUT')!;
    const rounds = w.isolation!.rounds;
    expect(
      rounds.map((r) => [r.names, r.status]),
      JSON.stringify(w).slice(0, 3000),
    ).toEqual([
      [['p0', 'p1'], 'healthy'],
      [['p2'], 'healthy'],
      [['p3'], 'broken'],
    ]);
    expect(rounds[2]).toMatchObject({ undone: { status: 'failed' }, restored: { status: 'succeeded', health: { outcome: 'healthy' } } });
    expect(w.isolation).toMatchObject({ outcome: 'stopped', culprits: [{ plugin: 'p3' }], reason: expect.stringContaining('which undid every update of it') });
    // What the report counts in is on the site, what it counts out is not: here the restore took every update back.
    const facts = isolationFacts(w.isolation!);
    for (const c of facts.kept) expect(live.plugins.get('plugin' in c ? c.plugin : '')!.version).toBe(c.to);
    for (const c of facts.left) expect(live.plugins.get('plugin' in c ? c.plugin : '')!.version).toBe(c.from);
    expect(facts.kept).toEqual([]);
    expect(live.plugins.get('p3')!.version).toBe('1.0.0');
    expect(res.stdout).not.toMatch(/updated: p[0-3]/);
  });
});
