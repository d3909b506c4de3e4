import { describe, expect, it } from 'vitest';
import { PRIORITY, RateBudget } from '../../src/run/rate-budget.js';
import { flush, ManualClock } from '../helpers/manual-clock.js';

/** Starts `n` acquisitions; returns the times (clock ms) at which each was granted, in grant order. */
function contenders(budget: RateBudget, clock: ManualClock, n: number, priority: 0 | 1 | 2 = PRIORITY.write, answerAfterMs = 0) {
  const granted: { i: number; at: number; priority: number }[] = [];
  for (let i = 0; i < n; i++) {
    void budget.acquire(undefined, priority).then(() => {
      granted.push({ i, at: clock.now(), priority });
      if (answerAfterMs === 0) budget.release();
      else clock.setTimeout(() => budget.release(), answerAfterMs);
    });
  }
  return granted;
}

describe('RateBudget', () => {
  it('never lets more than the limit start in any window, counting from the answers', async () => {
    const clock = new ManualClock();
    const budget = new RateBudget(10, 1000, { clock, marginMs: 0 });
    const granted = contenders(budget, clock, 35, PRIORITY.write, 50);
    await clock.advance(10_000);
    expect(granted).toHaveLength(35);
    const times = granted.map((g) => g.at);
    for (const t of times) expect(times.filter((u) => u >= t && u < t + 1000).length).toBeLessThanOrEqual(10);
  });

  it('paces a large run over the window instead of one burst: a quarter of the limit at once', async () => {
    const clock = new ManualClock();
    const budget = new RateBudget(100, 1000, { clock, marginMs: 0 });
    const granted = contenders(budget, clock, 100);
    await flush();
    expect(granted.length).toBe(25);
    await clock.advance(1000);
    expect(granted.length).toBe(100);
    // Spread after the first quarter, at a quarter above the average rate: 75 more over about 600 ms.
    expect(granted.at(-1)!.at).toBeGreaterThan(550);
  });

  it('serves urgent polls, then writes, then polls, whatever the order they asked in', async () => {
    const clock = new ManualClock();
    const budget = new RateBudget(1, 100, { clock, marginMs: 0 });
    const first = contenders(budget, clock, 1);
    await flush();
    expect(first).toHaveLength(1);
    const polls = contenders(budget, clock, 2, PRIORITY.poll);
    const writes = contenders(budget, clock, 2, PRIORITY.write);
    const urgent = contenders(budget, clock, 1, PRIORITY.urgent);
    await clock.advance(1000);
    const order = [...polls, ...writes, ...urgent].sort((a, b) => a.at - b.at).map((g) => g.priority);
    expect(order).toEqual([PRIORITY.urgent, PRIORITY.write, PRIORITY.write, PRIORITY.poll, PRIORITY.poll]);
  });

  it('on a 429 pauses everything for Retry-After, and takes the count the server let through', async () => {
    const clock = new ManualClock();
    const budget = new RateBudget(30, 1000, { clock, marginMs: 0 });
    for (let i = 0; i < 6; i++) {
      await budget.acquire();
      budget.release();
    }
    await budget.acquire();
    budget.release({ rateLimited: true, retryAfterMs: 1000 });
    expect(budget.limit).toBe(6); // what the server let through
    const granted = contenders(budget, clock, 1);
    await clock.advance(999);
    expect(granted).toHaveLength(0);
    await clock.advance(200);
    expect(granted).toHaveLength(1);
    expect(budget.rateLimitedCount).toBe(1);
  });

  it('learns a shorter window from Retry-After: 5 a second under 120 a minute', async () => {
    const clock = new ManualClock();
    const budget = new RateBudget(120, 60_000, { clock, marginMs: 0 });
    for (let i = 0; i < 5; i++) {
      await budget.acquire();
      budget.release();
    }
    await budget.acquire();
    budget.release({ rateLimited: true, retryAfterMs: 1000 });
    expect(budget.limit).toBe(120); // the minute's limit is not mistaken for 5
    expect(budget.describe()).toBe('120/60000ms, 5/1000ms');
    const granted = contenders(budget, clock, 20);
    await clock.advance(60_000);
    // From then on: never more than 5 in a second, and at the configured average pace (2 a second).
    const times = granted.map((g) => g.at);
    for (const t of times) expect(times.filter((u) => u >= t && u < t + 1000).length).toBeLessThanOrEqual(5);
    expect(granted.length).toBeGreaterThanOrEqual(19);
  });

  it('raises a lowered limit only while it holds calls back, and goes back without a pause if the raise is refused', async () => {
    const clock = new ManualClock();
    const budget = new RateBudget(40, 100, { clock, marginMs: 0, recoverAfterPeriods: 2 });
    for (let i = 0; i < 4; i++) {
      await budget.acquire();
      budget.release();
    }
    await budget.acquire();
    budget.release({ rateLimited: true, retryAfterMs: 100 });
    expect(budget.limit).toBe(4);
    // Idle for a long time: no raise, since the lowered limit held nothing back.
    await clock.advance(1000);
    await budget.acquire();
    budget.release();
    expect(budget.limit).toBe(4);
    // Saturated: raised by a tenth, at least one (it has been quiet for more than two windows), then once per two windows.
    const busy = contenders(budget, clock, 200);
    await clock.advance(150);
    expect(budget.limit).toBe(5);
    await clock.advance(200);
    expect(budget.limit).toBe(6);
    // The raise is refused: back to 5, and no pause of the whole budget.
    void budget.acquire(undefined, PRIORITY.urgent).then(() => budget.release({ rateLimited: true, retryAfterMs: 1000 }));
    await clock.advance(60);
    expect(budget.limit).toBe(5);
    const before = busy.length;
    await clock.advance(150);
    expect(busy.length).toBeGreaterThan(before);
  });

  it('an aborted wait gives up its place', async () => {
    const clock = new ManualClock();
    const budget = new RateBudget(1, 1000, { clock });
    await budget.acquire();
    const stop = new AbortController();
    const waiting = budget.acquire(stop.signal);
    stop.abort(new Error('stopped'));
    await expect(waiting).rejects.toThrow('stopped');
    budget.release();
    const next = contenders(budget, clock, 1);
    await clock.advance(1100);
    expect(next).toHaveLength(1);
  });
});
