import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { Report } from '../../src/report/report.js';
import type { Simulator } from '../../src/sim/server.js';
import { runCli, simEnv, startCli, tempDir, writePlaybook } from '../helpers/cli.js';
import { requestsTo } from '../helpers/plugins.js';
import { useSimulator, waitFor } from '../helpers/sim.js';

const start = useSimulator();

/** One live environment with four plugins at 1.0.0, 1.1.0 offered; p0 1.1.0 breaks the site. */
function fourPlugins(sim: Simulator) {
  sim.fleet.pluginCatalog.clear();
  const names = ['p0', 'p1', 'p2', 'p3'];
  for (const name of names) sim.fleet.pluginCatalog.set(name, { name, title: name, versions: ['1.0.0', '1.1.0'], vulnerable: new Set() });
  const live = [...sim.fleet.environments.values()].find((e) => e.displayName === 'live')!;
  for (const env of sim.fleet.environments.values()) {
    env.plugins.clear();
    if (env === live) for (const name of names) env.plugins.set(name, { version: '1.0.0', status: 'active', updateStatus: 'none', autoUpdateType: 'none' });
  }
  sim.breakPlugin('p0@1.1.0');
  return { live, names };
}

/**
 * A strict night (`max_failures: 0`: stop at the first failure) cut off by Ctrl-C while isolating:
 * the write under isolation is journaled `failed` ("isolating …; `sitefleet resume` goes on"), and a
 * resume counts it against the budget it starts from. Crossed at once, the resume sends nothing, and
 * says to resume again: the site keeps none of its other updates, night after night.
 *
 * Fails today (executor.ts, not edited here: budgetOf counts every known result with countFailure).
 * Fix: a result whose isolation is still `isolating` is not counted when a budget is made (it counts
 * once isolation ends, as in the run); or isolation under way is journaled with a status that does not count.
 */
describe('resume of an isolation cut off in a strict night', () => {
  it('max_failures: 0, Ctrl-C during isolation: the resume goes on to the culprit', async () => {
    const { sim } = await start({ sites: 1, seed: 5, operationDelayMs: 300, pageCacheTtlMs: 0 });
    const { live, names } = fourPlugins(sim);
    const dir = tempDir();
    const path = join(dir, 'r.json');
    const yaml = `version: 1
name: isolate
settings: { rate_limit: 50/s }
tasks:
  - name: plugin updates
    action: plugins.update
    target: { environment: live }
    backup_first: true
    health: { url: "${sim.siteUrl}", attempts: 2, interval: 50ms, on_broken: isolate }
    max_failures: 0
`;
    const running = startCli(['run', writePlaybook(yaml, dir), '--yes', '--poll-interval', '50', '--report', path], simEnv(sim), { timeoutMs: 60_000 });
    // After the write's own restore, as the first round goes out.
    await waitFor(
      () => requestsTo(sim, 'restoreBackup').filter((e) => e.path.split('/')[4] === live.id).length === 1 && requestsTo(sim, 'bulkUpdatePlugins').length === 2,
      30_000,
    );
    running.child.kill('SIGINT');
    expect((await running.done).code).toBe(130);
    const resumed = await runCli(['resume', path, '--yes', '--poll-interval', '50'], simEnv(sim));
    const report = JSON.parse(readFileSync(path, 'utf8')) as Report;
    const write = report.results.find((r) => r.target.env_id === live.id && r.request?.method === 'PUT')!;
    expect(write.isolation, resumed.stdout + resumed.stderr).toMatchObject({ outcome: 'found', culprits: [{ plugin: 'p0' }] });
    expect(Object.fromEntries(names.map((n) => [n, live.plugins.get(n)!.version]))).toEqual({ p0: '1.0.0', p1: '1.1.0', p2: '1.1.0', p3: '1.1.0' });
  });
});
