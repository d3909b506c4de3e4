import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli, simEnv, startCliInProcess, tempDir, writePlaybook } from '../helpers/cli.js';
import { fourPlugins, isolatedWrite, isolatingNight } from '../helpers/isolate.js';
import { useSimulator, whenAnswered } from '../helpers/sim.js';

const start = useSimulator();

/**
 * Ctrl-C twice (a halt) at each point of the life of a write that breaks its site (p0 1.1.0, with
 * on_broken: isolate), then `sitefleet resume`. On one site the requests come in one order: a restore
 * point, the error log read before the write, the write, its cache clear, the log read after it broke,
 * the restore, the restore's cache clear. Wherever the halt came, resume finishes that life: the site
 * put back and healthy, p0 found and left on 1.0.0, the other three updates kept.
 */
const MOMENTS: [string, string, number][] = [
  ['while its operation was followed', 'bulkUpdatePlugins', 1],
  ['before its look after (cache clear)', 'clearCache', 1],
  ['after its look found it broken, before the restore left', 'getLogs', 2],
  ['while the restore was followed', 'restoreBackup', 1],
  ["before the restore's look (cache clear)", 'clearCache', 2],
];

// The moments side by side: each a simulator, state folder and run of its own, waiting mostly on its own operations.
describe.concurrent('resume after a halt finishes the life of a write that broke its site', () => {
  for (const [when, endpoint, nth] of MOMENTS)
    it(`halted ${when}: resume puts the site back and isolates the culprit`, async ({ onTestFinished }) => {
      // Operations of 5 ms polled every 5 ms, cache clears without the vendor's gap: the halts come by event, not by time.
      const { sim } = await start({ sites: 1, seed: 2, operationDelayMs: 5, clearCacheGapMs: 0, pageCacheTtlMs: 0 }, { onTestFinished });
      const { live } = fourPlugins(sim);
      const dir = tempDir();
      const path = join(dir, 'r.json');
      const env = simEnv(sim);
      const running = await startCliInProcess(['run', writePlaybook(isolatingNight(sim), dir), '--yes', '--poll-interval', '5', '--report', path], env);
      let halted = false;
      whenAnswered(sim, endpoint, nth, () => {
        halted = true;
        running.interrupt();
        running.interrupt();
      });
      const run = await running.done;
      expect(halted).toBe(true);
      expect(run.code, run.stderr).toBe(130);
      const resumed = await runCli(['resume', path, '--yes', '--poll-interval', '5'], env);
      const told = `${resumed.stdout}${resumed.stderr}`;
      expect(resumed.code, told).toBe(1);
      expect(isolatedWrite(path, live.id), told).toMatchObject({
        status: 'failed',
        restored: { status: 'succeeded', health: { outcome: 'healthy' } },
        isolation: { outcome: 'found', culprits: [{ plugin: 'p0' }] },
      });
      expect((await fetch(sim.siteUrl.replace('{{domain}}', live.domains[0]!.name))).status).toBe(200);
      const versions = Object.fromEntries([...live.plugins].map(([name, p]) => [name, p.version]));
      expect(versions).toEqual({ p0: '1.0.0', p1: '1.1.0', p2: '1.1.0', p3: '1.1.0' });
    }, 60_000);
});
