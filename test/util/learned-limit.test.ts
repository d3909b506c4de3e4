import { describe, expect, it } from 'vitest';
import { afterAnswer, afterRefusal, initialLimits, LEARNING, type Limits } from '../../src/util/learned-limit.js';

/** A step of a sequence: a 429 (with Retry-After and what the server counted), or a quiet answer; `blocked` marks the rules as limiting. */
type Event = { at: number; refused?: { retryAfterMs?: number; counted: number }; blocked?: boolean };

function play(events: Event[], start: Limits = initialLimits(100, 60_000, 0)): { limits: Limits; pauses: (number | undefined)[] } {
  let limits = start;
  const pauses: (number | undefined)[] = [];
  for (const e of events) {
    if (e.blocked) for (const r of limits.rules) r.blockedAt = e.at;
    if (e.refused) {
      const decided = afterRefusal(limits, e.at, e.refused.retryAfterMs, () => e.refused!.counted);
      limits = decided.limits;
      pauses.push(decided.pauseUntil);
    } else {
      limits = afterAnswer(limits, e.at) ?? limits;
    }
  }
  return { limits, pauses };
}

const rules = (l: Limits) => l.rules.map((r) => ({ limit: r.limit, windowMs: r.windowMs, knownGood: r.knownGood, quietWindows: r.quietWindows }));

describe('the learned limit (one rule for the in-process budget and the Redis window)', () => {
  it.each([
    [
      'a 429 lowers the main rule to what the server counted and pauses one window',
      [{ at: 1000, refused: { counted: 80 } }],
      [{ limit: 80, windowMs: 60_000, knownGood: 80, quietWindows: 5 }],
      [61_000],
    ],
    [
      'a 429 with a Retry-After counts over it, when it is not much shorter',
      [{ at: 1000, refused: { retryAfterMs: 40_000, counted: 70 } }],
      [{ limit: 70, windowMs: 60_000, knownGood: 70, quietWindows: 5 }],
      [41_000],
    ],
    [
      'a Retry-After much shorter than the window learns a short-window rule beside the main one',
      [{ at: 1000, refused: { retryAfterMs: 1000, counted: 5 } }],
      [
        { limit: 100, windowMs: 60_000, knownGood: 100, quietWindows: 5 },
        { limit: 5, windowMs: 1000, knownGood: 5, quietWindows: 5 },
      ],
      [2000],
    ],
    [
      'no raise while the rule does not limit the run (not blocked), however long it is quiet',
      [{ at: 0, refused: { counted: 50 } }, { at: 10 * 60_000 }],
      [{ limit: 50, windowMs: 60_000, knownGood: 50, quietWindows: 5 }],
      [60_000],
    ],
    [
      'a raise of a tenth after five quiet windows in which the rule held calls back',
      [
        { at: 0, refused: { counted: 50 } },
        { at: 5 * 60_000 - 1, blocked: true },
        { at: 5 * 60_000, blocked: true },
      ],
      [{ limit: 55, windowMs: 60_000, knownGood: 50, quietWindows: 5 }],
      [60_000],
    ],
    [
      'a 429 right after a raise goes back to the limit that worked, doubles the wait, and does not pause',
      [
        { at: 0, refused: { counted: 50 } },
        { at: 5 * 60_000, blocked: true },
        { at: 5 * 60_000 + 1000, refused: { counted: 55 } },
      ],
      [{ limit: 50, windowMs: 60_000, knownGood: 50, quietWindows: 10 }],
      [60_000, undefined],
    ],
    [
      'a raise adds at least one call',
      [
        { at: 0, refused: { counted: 3 } },
        { at: 5 * 60_000, blocked: true },
      ],
      [{ limit: 4, windowMs: 60_000, knownGood: 3, quietWindows: 5 }],
      [60_000],
    ],
    [
      'a short rule raised to the main limit goes',
      [
        { at: 0, refused: { retryAfterMs: 1000, counted: 99 } },
        { at: 5000, blocked: true },
      ],
      [{ limit: 100, windowMs: 60_000, knownGood: 100, quietWindows: 5 }],
      [1000],
    ],
  ] as [string, Event[], ReturnType<typeof rules>, (number | undefined)[]][])('%s', (_name, events, expected, pauses) => {
    const played = play(events);
    expect(rules(played.limits)).toEqual(expected);
    expect(played.pauses).toEqual(pauses);
  });

  it('never raises a rule above its ceiling, and the wait before a raise stops doubling', () => {
    let limits = initialLimits(10, 1000, 0);
    for (let t = 1; t < 200; t++) {
      const refused = t % 2 === 0;
      for (const r of limits.rules) r.blockedAt = t * 10_000;
      limits = refused ? afterRefusal(limits, t * 10_000, undefined, () => 9).limits : (afterAnswer(limits, t * 10_000) ?? limits);
      expect(limits.rules[0]!.limit).toBeLessThanOrEqual(10);
      expect(limits.rules[0]!.quietWindows).toBeLessThanOrEqual(LEARNING.maxBackoffFactor * LEARNING.recoverAfterPeriods);
    }
  });

  it('leaves the limits it was given unchanged (the caller stores the new ones)', () => {
    const start = initialLimits(100, 60_000, 0);
    const copy = structuredClone(start);
    afterRefusal(start, 1000, 1000, () => 5);
    afterRefusal(start, 1000, undefined, () => 5);
    expect(start).toEqual(copy);
  });
});
