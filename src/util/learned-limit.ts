/**
 * How a limit the service enforces is learned from its 429s and raised again: the one rule both the
 * in-process budget (run/rate-budget.ts) and the company's Redis window (coord/redis/window.ts) follow.
 * Pure: the caller gives the time and what the server counted, and keeps the state where it lives
 * (in memory, or in Redis written with compare-and-set).
 *
 * - A 429 right after a raise (within two of the raised rule's windows) is a probe refused: the rule
 *   goes back to the limit that worked, the wait before the next raise doubles, and nothing pauses (the
 *   window accounting alone keeps the run under the limit that worked).
 * - Any other 429 pauses every call for Retry-After (or one window). A Retry-After much shorter than
 *   the main window means the server also limits bursts: a short-window rule learns as many calls per
 *   that window as the server let through. Otherwise the main rule comes down to what the server let
 *   through in its window.
 * - A lowered rule goes up by a tenth (at least one) once it has gone `quietWindows` of its windows
 *   without a 429 and it held calls back within its last window: a limit is only raised when it is what
 *   limits the run. A short rule that reaches the main rule's limit has nothing left to say and goes.
 */

export const LEARNING = {
  /** A lowered limit goes back up by this share of itself, at least one call, at a time. */
  raiseShare: 0.1,
  /** Windows of a rule, limited by it and without a 429, before it is raised. */
  recoverAfterPeriods: 5,
  /** The wait before a raise doubles after each refused raise, up to this many times the first. */
  maxBackoffFactor: 64,
  /** Our window is this much longer than the server's: its clock and rounding are not ours. */
  marginMs: 2,
} as const;

export interface LearnedRule {
  limit: number;
  /** Milliseconds the rule counts over. */
  windowMs: number;
  /** The configured limit: a rule is never raised above it. */
  ceiling: number;
  /** The limit before the last raise: a 429 right after the raise goes back to it. */
  knownGood: number;
  changedAt: number;
  /** Windows without a 429 before the next raise; doubles each time a raise is refused. */
  quietWindows: number;
  /** Last time this rule held a call back (a rule is only raised when it is what limits the run). */
  blockedAt: number;
}

/** The rules of one budget: `[0]` is the main (configured) rule, the rest learned short-window ones. */
export interface Limits {
  rules: LearnedRule[];
  /** Time of the last 429. */
  last429: number;
}

export function initialLimits(limit: number, windowMs: number, now: number, recoverAfterPeriods: number = LEARNING.recoverAfterPeriods): Limits {
  return { rules: [rule(limit, windowMs, limit, now, recoverAfterPeriods)], last429: -Infinity };
}

function rule(limit: number, windowMs: number, ceiling: number, now: number, quietWindows: number): LearnedRule {
  return { limit, windowMs, ceiling, knownGood: limit, changedAt: now, quietWindows, blockedAt: -Infinity };
}

/** The window the server counted over when it refused: its Retry-After, else the main window. */
export function refusalWindow(limits: Limits, retryAfterMs: number | undefined): number {
  return retryAfterMs !== undefined && retryAfterMs > 0 ? retryAfterMs : limits.rules[0]!.windowMs;
}

/**
 * A 429. `counted(windowMs)` is how many calls the server counted (answered, not refused) within
 * the last `windowMs`; it is asked for the refusal's window and the main window only. Returns the new
 * limits and the time to pause every call until (none: a refused raise, no pause).
 */
export function afterRefusal(
  limits: Limits,
  now: number,
  retryAfterMs: number | undefined,
  counted: (windowMs: number) => number,
  recoverAfterPeriods: number = LEARNING.recoverAfterPeriods,
): { limits: Limits; pauseUntil?: number } {
  const rules = limits.rules.map((r) => ({ ...r }));
  const next: Limits = { rules, last429: now };
  const probe = rules.find((r) => r.limit > r.knownGood && now - r.changedAt < r.windowMs * 2);
  if (probe) {
    probe.limit = probe.knownGood;
    probe.changedAt = now;
    probe.quietWindows = Math.min(probe.quietWindows * 2, LEARNING.maxBackoffFactor * recoverAfterPeriods);
    return { limits: next };
  }
  const main = rules[0]!;
  const window = refusalWindow(limits, retryAfterMs);
  if (window < main.windowMs / 2) {
    const passed = Math.max(1, counted(window));
    const existing = rules.find((r, i) => i > 0 && Math.abs(r.windowMs - window) < window / 2);
    if (existing) {
      existing.limit = Math.max(1, Math.min(existing.limit, passed));
      existing.knownGood = existing.limit;
      existing.changedAt = now;
    } else if (passed < main.limit) {
      rules.push(rule(passed, window, main.ceiling, now, recoverAfterPeriods));
    }
  } else {
    main.limit = Math.max(1, Math.min(main.limit, counted(main.windowMs)));
    main.knownGood = main.limit;
    main.changedAt = now;
  }
  return { limits: next, pauseUntil: now + window };
}

/** An answer that was not a 429: the first lowered rule due for a raise goes up a step (undefined: nothing changes). */
export function afterAnswer(limits: Limits, now: number): Limits | undefined {
  for (const [i, r] of limits.rules.entries()) {
    if (r.limit >= r.ceiling) continue;
    const quietFor = r.quietWindows * r.windowMs;
    if (now - Math.max(limits.last429, r.changedAt) < quietFor || now - r.blockedAt > r.windowMs) continue;
    const raised = { ...r, knownGood: r.limit, limit: Math.min(r.ceiling, r.limit + Math.max(1, Math.round(r.limit * LEARNING.raiseShare))), changedAt: now };
    const rules = limits.rules.map((x, j) => (j === i ? raised : x));
    // A learned rule that reached what the main one allows has nothing left to say.
    if (i > 0 && raised.limit >= rules[0]!.limit) rules.splice(i, 1);
    return { rules, last429: limits.last429 };
  }
  return undefined;
}
