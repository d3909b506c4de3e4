import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { Report } from '../../src/report/report.js';
import { runCli, simEnv, startCliInProcess, tempDir, writePlaybook } from '../helpers/cli.js';
import { roundAfterRestore } from '../helpers/plugins.js';
import { useSimulator, whenAnswered } from '../helpers/sim.js';
import { fourPlugins, isolatingNight } from '../helpers/isolate.js';
import { busiestTheme } from '../helpers/themes.js';
import type { Simulator } from '../../src/sim/server.js';
import type { SimEnvironment } from '../../src/sim/fleet.js';

const start = useSimulator();

/** What each environment runs of p0…p3. */
function versions(envs: SimEnvironment[]): Record<string, string>[] {
  return envs.map((env) => Object.fromEntries(['p0', 'p1', 'p2', 'p3'].map((n) => [n, env.plugins.get(n)!.version])));
}

/** The PUT writes of the night, as the report has them. */
function writes(path: string): Report['results'] {
  const report = JSON.parse(readFileSync(path, 'utf8')) as Report;
  return report.results.filter((r) => r.request?.method === 'PUT');
}

/** Every site answers its page healthy: none left broken by a write whose life was abandoned. */
async function allHealthy(sim: Simulator, envs: SimEnvironment[]): Promise<number[]> {
  const statuses: number[] = [];
  for (const env of envs) {
    const url = sim.siteUrl.replace('{{domain}}', env.domains[0]!.name);
    statuses.push((await fetch(url)).status);
  }
  return statuses;
}

/**
 * A stop keeps new writes from starting; every write already sent finishes its life. Before, on a
 * strict isolating night whose breaking version was on every site, the first isolation to end
 * crossed the budget and the run stopped every other one mid-round: a site was left answering 500
 * with the breaking version, another lost its other updates, and `resume` stopped at once on the budget.
 */
describe('a stop never abandons a started life', () => {
  it('max_failures: 0 on a night where p0 breaks every site: every isolation started finishes, no site is left broken', async () => {
    // Operations of 25 ms: an isolation is a dozen of them one after another, the four writes go out together first.
    const { sim } = await start({ sites: 4, seed: 5, operationDelayMs: 25, pageCacheTtlMs: 0 });
    const { lives } = fourPlugins(sim, 'all');
    const dir = tempDir();
    const path = join(dir, 'r.json');
    const yaml = isolatingNight(sim).replace('max_failures: 100', 'max_failures: 0');
    const run = await runCli(['run', writePlaybook(yaml, dir), '--yes', '--poll-interval', '50', '--report', path], simEnv(sim));
    expect(run.code, run.stderr).toBe(3);
    const sent = writes(path).filter((r) => r.status !== 'skipped');
    expect(sent.length).toBeGreaterThan(1);
    for (const write of sent) expect(write.isolation, JSON.stringify(write)).toMatchObject({ outcome: 'found', culprits: [{ plugin: 'p0' }] });
    const written = lives.filter((env) => sent.some((r) => r.target.env_id === env.id));
    for (const v of versions(written)) expect(v).toEqual({ p0: '1.0.0', p1: '1.1.0', p2: '1.1.0', p3: '1.1.0' });
    expect(await allHealthy(sim, lives)).toEqual(lives.map(() => 200));
  }, 90_000);

  it('the first Ctrl-C during isolation lets it finish; the run exits 130 with no site broken', async () => {
    const { sim } = await start({ sites: 1, seed: 5, operationDelayMs: 50, pageCacheTtlMs: 0, clearCacheGapMs: 0 });
    const { live } = fourPlugins(sim);
    const dir = tempDir();
    const path = join(dir, 'r.json');
    const running = await startCliInProcess(['run', writePlaybook(isolatingNight(sim), dir), '--yes', '--poll-interval', '50', '--report', path], simEnv(sim));
    let interrupted = false;
    // As the first round's write is answered (after the write's own restore): the round under way, whatever the machine's pace.
    whenAnswered(sim, 'updatePlugin', 1, () => {
      interrupted = roundAfterRestore(sim, live.id, 1);
      running.interrupt();
    });
    const done = await running.done;
    expect(interrupted).toBe(true);
    expect(done.code).toBe(130);
    expect(writes(path)[0]!.isolation, done.stderr).toMatchObject({ outcome: 'found', culprits: [{ plugin: 'p0' }] });
    expect(versions([live])).toEqual([{ p0: '1.0.0', p1: '1.1.0', p2: '1.1.0', p3: '1.1.0' }]);
    // Nothing is left for a resume to do: it sends nothing.
    const before = sim.log.length;
    const resumed = await runCli(['resume', path, '--yes', '--poll-interval', '50'], simEnv(sim));
    expect(resumed.stdout + resumed.stderr).toContain('nothing left to send');
    expect(sim.log.slice(before).filter((e) => e.method !== 'GET')).toEqual([]);
  });

  it('Ctrl-C twice while the cache is cleared: the write is held (not_looked), never succeeded; resume clears, looks and ends it', async () => {
    const { sim } = await start({ sites: 2, themes: 3, seed: 3, operationDelayMs: 50, clearCacheGapMs: 0 });
    const { theme } = busiestTheme(sim);
    const dir = tempDir();
    const path = join(dir, 'r.json');
    const yaml = `version: 1
name: cached
settings: { rate_limit: 50/s }
tasks:
  - name: update ${theme}
    action: themes.update
    target: { environment: live, theme: ${theme} }
    with: { themes: ${theme}, skip_vulnerable_updates: false }
    health: { url: "${sim.siteUrl}", attempts: 2, interval: 50ms }
`;
    const running = await startCliInProcess(['run', writePlaybook(yaml, dir), '--yes', '--poll-interval', '50', '--report', path], simEnv(sim));
    // As the first clear is answered: its operation under way, however long operations take.
    whenAnswered(sim, 'clearCache', 1, () => {
      running.interrupt();
      running.interrupt();
    });
    expect((await running.done).code).toBe(130);
    const cut = writes(path).filter((r) => r.held?.code === 'not_looked');
    expect(cut.length).toBeGreaterThan(0);
    for (const r of cut) expect(r.status).toBe('held');
    // No write is called done unless its site was looked at after it.
    expect(writes(path).filter((r) => r.status === 'succeeded' && r.health?.outcome !== 'healthy')).toEqual([]);
    const resumed = await runCli(['resume', path, '--yes', '--poll-interval', '50'], simEnv(sim));
    expect(resumed.code, resumed.stdout + resumed.stderr).toBe(0);
    for (const r of writes(path))
      expect(r, JSON.stringify(r)).toMatchObject({ status: 'succeeded', health: { outcome: 'healthy', cache: { outcome: 'cleared' } } });
  });
});
