import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli, simEnv, tempDir, writePlaybook } from '../helpers/cli.js';
import { busiestPlugin, requestsTo } from '../helpers/plugins.js';
import { useSimulator } from '../helpers/sim.js';

const start = useSimulator();
const T0 = Date.parse('2026-11-20T02:00:00.000Z');
const HOUR = 3_600_000;

function night(plugin: string) {
  return `version: 1\nname: q\nsettings: { rate_limit: 50/s, wait: true }\ntasks:\n  - name: update ${plugin}\n    action: plugins.update\n    target: { environment: live }\n    with: { plugins: ${plugin}, max_bump: major }\n    max_failures: 100\n`;
}

/**
 * retry_backoff's first wait is a day: a write that failed tonight is tried again tomorrow night, at
 * the same hour. A run takes time; its failures were recorded as of its end, so tomorrow's run
 * (planned at tonight's start + 24 h) came before the date and the update waited a second night:
 * every wait was a night longer than `retry_backoff` says. A failure now counts from its run's start.
 */
describe('retry_later: a one-day wait is the next night', () => {
  it('a write that failed in a run that took half an hour is sent again by the run 24 hours later', async () => {
    const { sim } = await start({ sites: 4, pluginsPerEnv: 10, seed: 7, failOperations: 1 });
    const { plugin, envs } = busiestPlugin(sim);
    const env = simEnv(sim);
    // Tonight's run: planned at T0; once its writes went, half an hour has passed.
    const clock = () => (requestsTo(sim, 'updatePlugin').length > 0 ? T0 + 30 * 60_000 : T0);
    const dir = tempDir();
    const first = await runCli(['run', writePlaybook(night(plugin), dir), '--yes', '--poll-interval', '50', '--report', join(dir, 'r.json')], env, {
      now: clock,
    });
    expect(first.code, first.stdout + first.stderr).toBe(1);
    // Tomorrow night, same hour.
    const tomorrow = await runCli(['plan', writePlaybook(night(plugin))], env, { now: () => T0 + 24 * HOUR });
    expect(tomorrow.stdout, tomorrow.stdout).toContain(`${envs.length} calls would be sent`);
  });
});
