import { afterEach, describe, expect, it } from 'vitest';
import { HostingClient } from '../../src/api/client.js';
import { SiteProbe } from '../../src/health/http/probe.js';
import { Caller } from '../../src/run/caller.js';
import { RateBudget } from '../../src/run/rate-budget.js';
import type { Simulator } from '../../src/sim/server.js';
import type { Clock } from '../../src/util/clock.js';
import { fourPlugins, isolatingNight } from '../helpers/isolate.js';
import { runInProcess, silent } from '../helpers/run.js';
import { useSimulator, waitFor } from '../helpers/sim.js';
import type { BusyRegister } from '../../src/coord/types.js';

const start = useSimulator();

/** Operations polled every 50 ms, not the CLI's 1 s at first: the lives' polls are not what is looked at. */
const FAST_POLLS = { intervalMs: 50, maxIntervalMs: 100 };

/** Real time until `hurry`, then twenty times faster (its timers too). */
function hurriedClock(): Clock & { hurry(): void } {
  let from: number | undefined;
  return {
    now: () => (from === undefined ? performance.now() : from + (performance.now() - from) * 20),
    setTimeout: (fn, ms) => setTimeout(fn, from === undefined ? ms : ms / 20),
    clearTimeout: (handle) => clearTimeout(handle as NodeJS.Timeout),
    hurry: () => void (from ??= performance.now()),
  };
}

const closing: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const close of closing.splice(0)) await close();
});

/**
 * The caller runInProcess makes (fast retries), its log reads held to one per 3 s on a clock that
 * `hurry` speeds up: before the stop the reads before writes wait for the rule; after it, the lives
 * finishing (isolation's reads after a failed check) need not wait 3 s a read. A read the stop should
 * have dropped would then go out at once, and show.
 */
function callerWithLogRule(sim: Simulator): { caller: Caller; hurry: () => void } {
  const clock = hurriedClock();
  const client = new HostingClient({ baseUrl: sim.baseUrl, token: sim.token });
  const logs = new RateBudget(1, 3000, { clock });
  closing.push(async () => {
    logs.dispose();
    await client.close();
  });
  const retry = { maxAttempts: 5, rateLimitWaitMs: 60_000, baseDelayMs: 5, maxDelayMs: 50 };
  return { caller: new Caller(client, { logs, logger: silent, concurrency: 8, retry }), hurry: () => clock.hurry() };
}

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
    const { caller, hurry } = callerWithLogRule(sim);
    const running = runInProcess(sim, isolatingNight(sim).replace(/^version: 1\nname: isolate\n/, ''), {
      sites,
      signal: interrupt.signal,
      caller,
      tracking: FAST_POLLS,
    });
    // Every site looked at before its write: each read before a write is asked for, waiting for the rule.
    await waitFor(() => new Set(sim.siteLog.map((e) => e.domain)).size === lives.length, 60_000);
    const stoppedAt = sim.log.length;
    interrupt.abort();
    hurry();
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
    const { caller, hurry } = callerWithLogRule(sim);
    const running = runInProcess(sim, isolatingNight(sim).replace(/^version: 1\nname: isolate\n/, ''), {
      sites,
      busy,
      halt,
      signal: interrupt.signal,
      caller,
      tracking: FAST_POLLS,
    });
    await waitFor(() => new Set(sim.siteLog.map((e) => e.domain)).size === lives.length, 60_000);
    interrupt.abort();
    hurry();
    const { results, stopped } = await running;
    expect(stopped?.kind).toBe('interrupted');
    expect(halt.signal.aborted).toBe(false);
    // Every write that went ended its life: none left accepted or held for a look nobody took.
    for (const r of results.values()) expect(['accepted', 'held'], JSON.stringify(r)).not.toContain(r.status);
  }, 60_000);
});
