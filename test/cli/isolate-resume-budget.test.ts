import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { Report } from '../../src/report/report.js';
import { runCli, simEnv, startCliInProcess, tempDir, writePlaybook } from '../helpers/cli.js';
import { roundAfterRestore } from '../helpers/plugins.js';
import { useSimulator, waitFor } from '../helpers/sim.js';
import { fourPlugins, isolatingNight } from '../helpers/isolate.js';

const start = useSimulator();

/**
 * A strict night (`max_failures: 0`: stop at the first failure) cut off by Ctrl-C while isolating:
 * the write under isolation is journaled `failed` ("isolating …; `sitefleet resume` goes on"), and a
 * resume counts it against the budget it starts from. Crossed at once, the resume sends nothing, and
 * says to resume again: the site keeps none of its other updates, night after night.
 *
 * It failed before a budget left out the writes still being isolated (executor.ts budgetOf): they count
 * once their isolation ends.
 */
describe('resume of an isolation cut off in a strict night', () => {
  it('max_failures: 0, Ctrl-C during isolation: the resume goes on to the culprit', async () => {
    const { sim } = await start({ sites: 1, seed: 5, operationDelayMs: 150, clearCacheGapMs: 0, pageCacheTtlMs: 0 });
    const { live, names } = fourPlugins(sim);
    const dir = tempDir();
    const path = join(dir, 'r.json');
    const yaml = isolatingNight(sim).replace('max_failures: 100', 'max_failures: 0');
    const running = await startCliInProcess(['run', writePlaybook(yaml, dir), '--yes', '--poll-interval', '20', '--report', path], simEnv(sim));
    // After the write's own restore, as the first round goes out.
    await waitFor(() => roundAfterRestore(sim, live.id, 1), 60_000);
    // The budget was crossed as the site was seen broken, so the run had stopped (isolation finishing under
    // the stop, exit 3 whatever comes after): Ctrl-C twice halts it, cutting isolation short.
    running.interrupt();
    running.interrupt();
    expect((await running.done).code).toBe(3);
    const cut = (JSON.parse(readFileSync(path, 'utf8')) as Report).results.find((r) => r.target.env_id === live.id && r.request?.method === 'PUT')!;
    expect(cut.isolation?.outcome).toBe('isolating');
    const resumed = await runCli(['resume', path, '--yes', '--poll-interval', '20'], simEnv(sim));
    const report = JSON.parse(readFileSync(path, 'utf8')) as Report;
    const write = report.results.find((r) => r.target.env_id === live.id && r.request?.method === 'PUT')!;
    expect(write.isolation, resumed.stdout + resumed.stderr).toMatchObject({ outcome: 'found', culprits: [{ plugin: 'p0' }] });
    expect(Object.fromEntries(names.map((n) => [n, live.plugins.get(n)!.version]))).toEqual({ p0: '1.0.0', p1: '1.1.0', p2: '1.1.0', p3: '1.1.0' });
  });
});
