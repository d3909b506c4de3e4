import { describe, expect, it } from 'vitest';
import type { OperationStatus } from '../../src/api/types.js';
import type { Outcome } from '../../src/run/caller.js';
import { PRIORITY } from '../../src/run/rate-budget.js';
import { Watcher, type WatchOptions } from '../../src/run/watcher.js';
import { ManualClock } from '../helpers/manual-clock.js';

/** A fake service: each operation ends `durationMs` after it was registered; every poll is logged. */
function service(clock: ManualClock) {
  const ops = new Map<string, { startedAt: number; durationMs: number; fail?: string; failures?: number }>();
  const polls: { id: string; at: number; priority: number }[] = [];
  const poll = async (id: string, o: { priority: number }): Promise<Outcome<OperationStatus>> => {
    polls.push({ id, at: clock.now(), priority: o.priority });
    const op = ops.get(id);
    if (!op) return { ok: true, value: { state: 'not_found' } as OperationStatus, attempts: 1 };
    if (op.failures) {
      op.failures--;
      return { ok: true, value: { state: 'failed', message: 'passing error' } as OperationStatus, attempts: 1 };
    }
    if (clock.now() - op.startedAt < op.durationMs) return { ok: true, value: { state: 'in_progress' } as OperationStatus, attempts: 1 };
    if (op.fail) return { ok: true, value: { state: 'failed', message: op.fail } as OperationStatus, attempts: 1 };
    return { ok: true, value: { state: 'succeeded' } as OperationStatus, attempts: 1 };
  };
  return { ops, polls, poll };
}

const opts: WatchOptions = { timeoutMs: 600_000, notFoundGraceMs: 30_000 };

describe('Watcher', () => {
  it('probes a few operations of a new kind on a growing schedule and parks the rest until they teach', async () => {
    const clock = new ManualClock();
    const svc = service(clock);
    const watcher = new Watcher(svc.poll, { clock, firstPollMs: 1000, probes: 3 });
    const done: Promise<unknown>[] = [];
    for (let i = 0; i < 50; i++) {
      svc.ops.set(`op${i}`, { startedAt: 0, durationMs: 7000 + (i % 5) * 100 });
      done.push(watcher.watch(`op${i}`, 'backup', opts).done);
    }
    await clock.advance(7000);
    // Only the three probes were polled, at 1, 1.5, 2.25, 3.375 and 5.06 s, and at write priority.
    expect(new Set(svc.polls.map((p) => p.id))).toEqual(new Set(['op0', 'op1', 'op2']));
    expect([...new Set(svc.polls.map((p) => Math.round(p.at)))]).toEqual([1000, 1500, 2250, 3375, 5063]);
    expect(svc.polls.every((p) => p.priority === PRIORITY.write)).toBe(true);
    await clock.advance(60_000);
    const results = (await Promise.all(done)) as { state: string }[];
    expect(results.every((r) => r.state === 'succeeded')).toBe(true);
    // 50 operations: most are done at their first (predicted) poll.
    expect(svc.polls.length / 50).toBeLessThanOrEqual(1.5);
  });

  it('an operation seen to end is not polled again when watched again (an isolation round follows its writes twice)', async () => {
    const clock = new ManualClock();
    const svc = service(clock);
    const watcher = new Watcher(svc.poll, { clock, firstPollMs: 1000 });
    svc.ops.set('done', { startedAt: 0, durationMs: 500 });
    svc.ops.set('broke', { startedAt: 0, durationMs: 500, fail: 'plugin not found' });
    const first = [watcher.watch('done', 'plugins', opts).done, watcher.watch('broke', 'plugins', opts).done];
    await clock.advance(10_000);
    const [done, broke] = await Promise.all(first);
    const polled = svc.polls.length;
    // Watched again: answered at once, the same end, no poll and no wait for the clock.
    expect(await watcher.watch('done', 'plugins', opts).done).toEqual({ ...done, polls: 0 });
    expect(await watcher.watch('broke', 'plugins', opts).done).toMatchObject({ state: 'failed', message: 'plugin not found', polls: 0 });
    expect([done!.state, broke!.state, svc.polls.length]).toEqual(['succeeded', 'failed', polled]);
    // One that did not end (stopped watching) is polled when watched again.
    svc.ops.set('long', { startedAt: 0, durationMs: 60_000 });
    const stop = new AbortController();
    const cut = watcher.watch('long', 'plugins', { ...opts, until: stop.signal }).done;
    stop.abort();
    expect((await cut).state).toBe('untracked');
    const again = watcher.watch('long', 'plugins', opts).done;
    await clock.advance(120_000);
    expect((await again).state).toBe('succeeded');
    expect(svc.polls.length).toBeGreaterThan(polled);
  });

  it('polls a known kind at its predicted moment, and a late one on a short, growing schedule', async () => {
    const clock = new ManualClock();
    const svc = service(clock);
    const watcher = new Watcher(svc.poll, { clock, firstPollMs: 1000 });
    for (const d of [5000, 5000, 5000]) watcher.model.record('php', 0, d);
    svc.ops.set('late', { startedAt: 0, durationMs: 9000 });
    const done = watcher.watch('late', 'php', opts).done;
    await clock.advance(30_000);
    expect((await done).state).toBe('succeeded');
    const times = svc.polls.map((p) => p.at);
    expect(times[0]).toBe(5000);
    // gaps of a quarter of the prediction, growing by half
    expect(times.slice(1, 3)).toEqual([6250, 8125]);
    expect(times.length).toBe(4);
  });

  it('polls at poll priority, and ahead of writes once something waits for the operation', async () => {
    const clock = new ManualClock();
    const svc = service(clock);
    const watcher = new Watcher(svc.poll, { clock, firstPollMs: 1000 });
    for (const d of [1000, 1000]) watcher.model.record('php', 0, d); // a known kind: no probing
    svc.ops.set('a', { startedAt: 0, durationMs: 1500 });
    const watch = watcher.watch('a', 'php', opts);
    await clock.advance(1000);
    watch.expedite();
    await clock.advance(5000);
    expect(svc.polls.map((p) => p.priority)).toEqual([PRIORITY.poll, PRIORITY.urgent, PRIORITY.urgent]);
  });

  it('keeps the old rules: a 404 in the grace period is "not visible yet", a 500 is read twice, a timeout ends unknown', async () => {
    const clock = new ManualClock();
    const svc = service(clock);
    const watcher = new Watcher(svc.poll, { clock, firstPollMs: 1000 });
    const invisible = watcher.watch('later', 'x', { timeoutMs: 600_000, notFoundGraceMs: 3000 }).done;
    await clock.advance(1500);
    svc.ops.set('later', { startedAt: 0, durationMs: 0 });
    svc.ops.set('flaky', { startedAt: 0, durationMs: 0, failures: 1 });
    const flaky = watcher.watch('flaky', 'y', opts).done;
    svc.ops.set('slow', { startedAt: 0, durationMs: 10_000_000 });
    const slow = watcher.watch('slow', 'z', { timeoutMs: 20_000, notFoundGraceMs: 0 }).done;
    svc.ops.set('broken', { startedAt: 0, durationMs: 0, fail: 'disk full' });
    const broken = watcher.watch('broken', 'w', opts).done;
    await clock.advance(30_000);
    expect((await invisible).state).toBe('succeeded');
    expect((await flaky).state).toBe('succeeded');
    expect(await slow).toMatchObject({ state: 'unknown', timedOut: true });
    expect(await broken).toMatchObject({ state: 'failed', message: 'disk full' });
    const gone = watcher.watch('never', 'v', { timeoutMs: 600_000, notFoundGraceMs: 2000 }).done;
    await clock.advance(10_000);
    expect((await gone).state).toBe('unknown');
  });

  it('an operation of unknown age is looked at once at once; stopping ends every watch untracked', async () => {
    const clock = new ManualClock();
    const svc = service(clock);
    const stop = new AbortController();
    const watcher = new Watcher(svc.poll, { clock, signal: stop.signal });
    svc.ops.set('old', { startedAt: -100_000, durationMs: 1000 });
    svc.ops.set('running', { startedAt: 0, durationMs: 100_000 });
    const old = watcher.watch('old', 'x', { ...opts, unknownAge: true }).done;
    const running = watcher.watch('running', 'x', { ...opts, unknownAge: true }).done;
    await clock.advance(0);
    expect((await old).state).toBe('succeeded');
    expect(svc.polls.map((p) => p.at)).toEqual([0, 0]);
    stop.abort();
    expect((await running).state).toBe('untracked');
    expect(watcher.pending).toBe(0);
    // Its duration taught nothing about fresh operations of the kind: the age was unknown.
    expect(watcher.model.predict('x')).toBeUndefined();
  });
});
