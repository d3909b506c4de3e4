import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { Report } from '../../src/report/report.js';
import type { Simulator } from '../../src/sim/server.js';
import { runCli, simEnv, tempDir, writePlaybook } from '../helpers/cli.js';
import { busiestPlugin, offeredPlugins, requestsTo } from '../helpers/plugins.js';
import { useSimulator } from '../helpers/sim.js';

const start = useSimulator();

/** A pinned plugin night (max_bump: every write names its version, the endpoint takes one plugin) on every live environment, guarded. */
function pinnedNight(sim: Simulator, health: string): string {
  return `version: 1
name: pinned night
settings: { rate_limit: 50/s }
tasks:
  - name: plugins
    action: plugins.update
    target: { environment: live }
    with: { max_bump: major }
    backup_first: true
    max_failures: 100
    health: { url: "${sim.siteUrl}", attempts: 1, interval: 50ms${health} }
`;
}

async function run(sim: Simulator, yaml: string, command = 'run') {
  const dir = tempDir();
  const reportPath = join(dir, 'r.json');
  const flags = command === 'run' ? ['--yes', '--poll-interval', '50', '--report', reportPath] : [];
  const result = await runCli([command, writePlaybook(yaml, dir), ...flags], simEnv(sim));
  const report = command === 'run' ? (JSON.parse(readFileSync(reportPath, 'utf8')) as Report) : undefined;
  return { ...result, out: result.stdout + result.stderr, report };
}

/** Live environments with more than one safe plugin update offered, and how many each. */
function liveOffers(sim: Simulator): Map<string, number> {
  const live = new Set([...sim.fleet.environments.values()].filter((e) => e.displayName === 'live').map((e) => e.id));
  const per = new Map<string, number>();
  for (const o of offeredPlugins(sim)) if (live.has(o.env) && !o.vulnerableUpdate) per.set(o.env, (per.get(o.env) ?? 0) + 1);
  return per;
}

/** Page looks per environment's domain, in the simulator's site log. */
function looksAt(sim: Simulator, envId: string): number {
  const domain = sim.fleet.environments.get(envId)!.domains[0]!.name;
  return sim.siteLog.filter((v) => v.domain === domain).length;
}

describe('one guard per environment: pinned writes of a task share one look (issue 56, item 1)', () => {
  it('a pinned night of several plugins an environment: one restore point, one look before, one clear and one look after each', async () => {
    const { sim } = await start({ sites: 4, pluginsPerEnv: 8, seed: 11, operationDelayMs: 20 });
    const offers = liveOffers(sim);
    const written = [...offers.keys()];
    // The seed gives environments with several updates: what a guard per write would multiply.
    expect(Math.max(...offers.values())).toBeGreaterThan(2);
    const planned = await run(sim, pinnedNight(sim, ''), 'plan');
    const writes = [...offers.values()].reduce((a, b) => a + b, 0);
    expect(planned.stdout).toContain(`and ${written.length} times after ${writes} guarded writes (one guard an environment`);
    const night = await run(sim, pinnedNight(sim, ''));
    expect(night.code, night.out).toBe(0);
    const statuses = night.report!.results.filter((r) => r.role !== 'backup').map((r) => r.status);
    expect(statuses).toHaveLength(writes);
    expect(new Set(statuses)).toEqual(new Set(['succeeded']));
    expect(offeredPlugins(sim).filter((o) => offers.has(o.env) && !o.vulnerableUpdate)).toEqual([]);
    const perEnv = (endpoint: string) => written.map((id) => requestsTo(sim, endpoint).filter((e) => e.path.split('/')[4] === id).length);
    expect(perEnv('addManualBackup')).toEqual(written.map(() => 1));
    expect(perEnv('updatePlugin')).toEqual(written.map((id) => offers.get(id)));
    expect(requestsTo(sim, 'clearCache')).toHaveLength(written.length);
    // A look is one page (attempts: 1): one before the first write, one after the last.
    expect(written.map((id) => looksAt(sim, id))).toEqual(written.map(() => 2));
  });

  it('a plugin of the group breaks the site: put back by the items’ files, once, for all of them; no backup restored', async () => {
    const { sim } = await start({ sites: 3, pluginsPerEnv: 8, seed: 5, operationDelayMs: 20 });
    const { plugin, envs } = busiestPlugin(sim);
    sim.breakPlugin(`${plugin}@latest`);
    const offers = liveOffers(sim);
    const broken = envs.filter((id) => (offers.get(id) ?? 0) > 1);
    expect(broken.length).toBeGreaterThan(0);
    const night = await run(sim, pinnedNight(sim, ', on_broken: restore, undo: items_first'));
    expect(requestsTo(sim, 'restoreBackup')).toEqual([]);
    for (const id of broken) {
      const env = sim.fleet.environments.get(id)!;
      const steps = night.report!.results.filter((r) => r.target?.env_id === id && r.role !== 'backup');
      expect(steps.length).toBe(offers.get(id));
      // One put-back for the group, carried by the write whose look it was; the others say so.
      const holders = steps.filter((r) => r.undone);
      expect(holders).toHaveLength(1);
      expect(holders[0]!.undone).toMatchObject({ status: 'succeeded', health: { outcome: 'healthy' } });
      expect(holders[0]!.undone!.commands).toHaveLength(offers.get(id)!);
      for (const r of steps.filter((x) => !x.undone))
        expect(r).toMatchObject({ status: 'failed', reason: expect.stringMatching(/^undone: put back by its files/) as unknown });
      // No plugin of the group stays on its new version, and the site is healthy again.
      expect(offeredPlugins(sim).filter((o) => o.env === id && !o.vulnerableUpdate)).toHaveLength(offers.get(id)!);
      expect(env.plugins.get(plugin)!.version).not.toBe(sim.fleet.pluginCatalog.get(plugin)!.versions.at(-1));
    }
  });
});
