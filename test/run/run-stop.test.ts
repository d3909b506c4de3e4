import { describe, expect, it } from 'vitest';
import { RunStop } from '../../src/run/run-stop.js';
import type { Clock } from '../../src/util/clock.js';

/** A clock whose timers fire when the test says. */
function manualClock() {
  const timers = new Map<number, { at: number; fn: () => void }>();
  let now = 0;
  let next = 1;
  const clock: Clock = {
    now: () => now,
    setTimeout: (fn, ms) => (timers.set(next, { at: now + ms, fn }), next++),
    clearTimeout: (h) => void timers.delete(h as number),
  };
  const advance = (ms: number) => {
    now += ms;
    for (const [h, t] of [...timers])
      if (t.at <= now) {
        timers.delete(h);
        t.fn();
      }
  };
  return { clock, advance, pending: () => timers.size };
}

describe('a stop and a halt', () => {
  it('a budget stop stops new writes at once and halts started lives only once finish_within ran out', () => {
    const { clock, advance } = manualClock();
    const stop = new RunStop(undefined, () => undefined, { finishWithinMs: 1000, clock });
    stop.stop('budget crossed', 'budget');
    expect([stop.stopped, stop.halted]).toEqual([true, false]);
    advance(999);
    expect(stop.halted).toBe(false);
    advance(1);
    expect(stop.halted).toBe(true);
    expect((stop.halt.reason as Error).message).toMatch(/finish_within/);
  });

  it('a 401 or lost coordination halts at once, also after a stop', () => {
    const { clock } = manualClock();
    const stop = new RunStop(undefined, () => undefined, { finishWithinMs: 1000, clock });
    stop.stop('window closed', 'window');
    expect(stop.halted).toBe(false);
    stop.stop('token rejected', 'auth');
    expect(stop.halted).toBe(true);
    expect(stop.reason?.kind).toBe('window');
  });

  it('the window closing starts the finish clock without stopping the run; the clock starts once, and never after the run ended', () => {
    const { clock, advance, pending } = manualClock();
    const stop = new RunStop(undefined, () => undefined, { finishWithinMs: 1000, clock });
    stop.startFinishClock();
    stop.startFinishClock();
    expect(pending()).toBe(1);
    expect(stop.stopped).toBe(false);
    advance(1000);
    expect(stop.halted).toBe(true);

    const ended = new RunStop(undefined, () => undefined, { finishWithinMs: 1000, clock });
    ended.dispose();
    ended.stop('budget crossed', 'budget');
    expect(pending()).toBe(0);
  });

  it("the owner's halt (a second Ctrl-C) halts, and the run's own halt reaches the owner", () => {
    const { clock } = manualClock();
    const owner = new AbortController();
    const stop = new RunStop(undefined, () => undefined, { finishWithinMs: 1000, clock, outerHalt: owner.signal });
    owner.abort(new Error('interrupted twice'));
    expect([stop.stopped, stop.halted]).toEqual([true, true]);
    const mine = new AbortController();
    const other = new RunStop(undefined, () => undefined, { finishWithinMs: 1000, clock, outerHalt: mine.signal, onHalt: () => mine.abort() });
    other.stop('token rejected', 'auth');
    expect(mine.signal.aborted).toBe(true);
    expect(other.reason?.kind).toBe('auth');
  });
});
