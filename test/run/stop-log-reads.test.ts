import { describe, expect, it } from 'vitest';
import { SiteProbe } from '../../src/health/http/probe.js';
import { fourPlugins, isolatingNight } from '../helpers/isolate.js';
import { runInProcess } from '../helpers/run.js';
import { useSimulator, waitFor } from '../helpers/sim.js';
import type { BusyRegister } from '../../src/coord/types.js';

const start = useSimulator();

/** Operations polled every 50 ms, not the CLI's 1 s at first: the lives' polls are not what is looked at. */
const FAST_POLLS = { intervalMs: 50, maxIntervalMs: 100 };

/**
 * Under `on_broken: isolate` each write's error log is read before it (isolation's first suspect), and
 * log reads have a rule of their own (35 a minute on the service). A stop keeps the writes still
 * waiting from starting: the reads before them, waiting for that rule, must go too, or they spend the
 * rule's slots that the lives finishing after the stop need for their reads after a failed check (a
 * night of 50 sites stopped by its budget exited 46 s after the stop where its lives needed 18.5 s:
 * bench `stop-lives`, docs/benchmarks.md scenario 29).
 */
describe('a stop drops the log reads before writes it keeps from starting', () => {
  it('Ctrl-C while reads before writes wait for the logs rule: none of them goes out after it', async () => {
    const { sim } = await start({ sites: 4, seed: 7, operationDelayMs: 50, pageCacheTtlMs: 0 });
    const { lives } = fourPlugins(sim, 'all');
    const interrupt = new AbortController();
    const sites = new SiteProbe({ userAgent: 'sitefleet-test' });
    // One read a while: the first goes at once, the others wait for the rule.
    const running = runInProcess(sim, isolatingNight(sim).replace(/^version: 1\nname: isolate\n/, ''), {
      sites,
      signal: interrupt.signal,
      logs: { limit: 1, periodMs: 3000 },
      tracking: FAST_POLLS,
    });
    // Every site looked at before its write: each read before a write is asked for, waiting for the rule.
    await waitFor(() => new Set(sim.siteLog.map((e) => e.domain)).size === lives.length, 60_000);
    const stoppedAt = sim.log.length;
    interrupt.abort();
    const { results, plan } = await running;
    const skipped = new Set(plan.steps.filter((s) => results.get(s.id)?.status === 'skipped').map((s) => s.target.env_id));
    expect(skipped.size).toBeGreaterThan(0);
    const late = sim.log.slice(stoppedAt).filter((e) => e.endpoint === 'getLogs' && skipped.has(e.path.split('/')[4]));
    expect(late.map((e) => e.path)).toEqual([]);
  }, 60_000);

  it('with coordination, a write waiting for its claim when the run stops is not sent, and the stop stays a stop (never a halt)', async () => {
    const { sim } = await start({ sites: 4, seed: 7, operationDelayMs: 50, pageCacheTtlMs: 0 });
    const { lives } = fourPlugins(sim, 'all');
    const interrupt = new AbortController();
    const halt = new AbortController();
    const sites = new SiteProbe({ userAgent: 'sitefleet-test' });
    // As RedisBusy does: a claim asked for on an aborted signal throws its reason.
    const busy: BusyRegister = {
      claim: (_env, signal) =>
        signal.aborted ? Promise.reject(signal.reason as Error) : Promise.resolve({ started: () => undefined, ended: () => undefined }),
    };
    const running = runInProcess(sim, isolatingNight(sim).replace(/^version: 1\nname: isolate\n/, ''), {
      sites,
      busy,
      halt,
      signal: interrupt.signal,
      logs: { limit: 1, periodMs: 3000 },
      tracking: FAST_POLLS,
    });
    await waitFor(() => new Set(sim.siteLog.map((e) => e.domain)).size === lives.length, 60_000);
    interrupt.abort();
    const { results, stopped } = await running;
    expect(stopped?.kind).toBe('interrupted');
    expect(halt.signal.aborted).toBe(false);
    // Every write that went ended its life: none left accepted or held for a look nobody took.
    for (const r of results.values()) expect(['accepted', 'held'], JSON.stringify(r)).not.toContain(r.status);
  }, 60_000);
});
