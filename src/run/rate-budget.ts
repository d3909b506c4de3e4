import type { SlotOutcome } from '../coord/types.js';
import { systemClock, type Clock } from '../util/clock.js';

/**
 * Who is asking for a slot. Lower goes first: a poll that a waiting write (or the end of a wave)
 * depends on, then writes, then every other poll. Polls are how a run learns what it did, but a
 * write that waits for a slot delays the whole fleet, and a poll sent later is usually answered
 * "done" at once instead of "still running".
 */
export const PRIORITY = { urgent: 0, write: 1, poll: 2 } as const;
export type Priority = (typeof PRIORITY)[keyof typeof PRIORITY];

/** A limit the budget keeps: at most `limit` calls in any window of `windowMs`. */
interface Rule {
  limit: number;
  readonly windowMs: number;
  /** The configured rule can come down and go back up to its configured limit; learned ones come and go. */
  readonly ceiling: number;
  /** Last time a waiter was held back by this rule: a rule is only raised when it is what limits the run. */
  blockedAt: number;
  /** Limit before the last raise: a 429 right after a raise goes back to it without a pause. */
  knownGood: number;
  changedAt: number;
  /** Windows without a 429 before the next raise; doubles each time a raise is refused. */
  quietWindows: number;
}

/** The pacer runs this much faster than the window's average rate (see #paceRate). */
const PACE_HEADROOM = 1.25;

/** A lowered limit goes back up by this share of itself (at least one) at a time. */
const RAISE_SHARE = 0.1;

/**
 * Tokens the pacer may hold once the starting credit is spent: enough to absorb late timers at any
 * rate, small enough that a stalled event loop does not release a burst when it wakes (a burst at
 * the moment the service's limit is reached is a burst of 429s).
 */
function steadyBurst(limit: number): number {
  return Math.max(2, Math.ceil(limit / 50));
}

export interface RateBudgetOptions {
  clock?: Clock;
  /** Periods of the rule's own window, limited by it and without a 429, before it is raised by one. */
  recoverAfterPeriods?: number;
  marginMs?: number;
}

/**
 * The API budget shared by every call of a run: at most `limit` calls in any window of `periodMs`,
 * counted as the server counts them.
 *
 * The server counts a call when it arrives, which the client only knows lies between sending it and
 * hearing the answer. So a call holds its slot from the moment it is sent until one period after its
 * answer: whatever the network did, the server can never see more than `limit` arrivals in a window.
 *
 * Sends are also paced by a token bucket that refills a quarter faster than the rules' average rate. It starts with a
 * quarter of the limit, so a small run still goes out at once, then holds only a few tokens, so a large
 * one is spread over the window instead of arriving as one burst. That is what keeps an overstated limit cheap: when the first 429 comes,
 * only the one or two calls sent in the last moments are in flight, not a whole burst.
 *
 * When the server answers 429 (its limit is lower, or others share the key), the budget learns:
 * - the whole budget pauses for Retry-After and the bucket shrinks to one call (no more bursts);
 * - Retry-After tells the window the server counts. Much shorter than ours: the server limits bursts
 *   (say 5 a second under a 120-a-minute plan), so a second rule is added, as many calls per that
 *   window as it let through. About ours: our own limit comes down to what the server let through in
 *   the window. Since sends are paced, that count is close to exact: few calls are in flight.
 * - A lowered rule goes back up by a tenth (at least one) after `recoverAfterPeriods` of its windows
 *   in which it held calls back without a 429. A 429 right after such a raise returns to the limit
 *   that worked, doubles the wait before the next raise, and makes no pause: the window accounting alone keeps the run under it. So a 429 from
 *   someone else's burst costs a little speed for a while, not the rest of the run.
 *
 * Waiters are served by priority (see PRIORITY), first come first served within one.
 */
export class RateBudget {
  readonly configuredLimit: number;
  readonly #clock: Clock;
  readonly #rules: Rule[];
  readonly #marginMs: number;
  readonly #recoverAfterPeriods: number;
  /** Answer times of finished calls, in order (monotonic clock), and whether the server counted each. */
  #ends: { at: number; counted: boolean }[] = [];
  #head = 0;
  #inFlight = 0;
  #pausedUntil = 0;
  #tokens: number;
  #tokensAt: number;
  #burst: number;
  readonly #waiters: (() => void)[][] = [[], [], []];
  #waiting = 0;
  #timer: unknown;
  #timerAt = Infinity;
  #last429 = -Infinity;
  rateLimitedCount = 0;

  constructor(limit: number, periodMs: number, options: RateBudgetOptions = {}) {
    this.configuredLimit = limit;
    this.#clock = options.clock ?? systemClock;
    // A small margin absorbs the difference between our clock and the server's rounding.
    this.#marginMs = options.marginMs ?? 2;
    this.#recoverAfterPeriods = options.recoverAfterPeriods ?? 5;
    const now = this.#clock.now();
    this.#rules = [
      {
        limit,
        windowMs: periodMs + this.#marginMs,
        ceiling: limit,
        blockedAt: -Infinity,
        knownGood: limit,
        changedAt: now,
        quietWindows: this.#recoverAfterPeriods,
      },
    ];
    this.#burst = steadyBurst(limit);
    this.#tokens = Math.max(this.#burst, Math.ceil(limit / 4)); // the starting credit
    this.#tokensAt = now;
  }

  /** The configured rule's current limit. */
  get limit(): number {
    return this.#rules[0]!.limit;
  }

  /**
   * Whether the configured rule has a free slot beside the calls in flight. A 429 while it does was
   * not this window's doing: a creating call refused under the service's creation limit.
   */
  hasRoom(): boolean {
    const main = this.#rules[0]!;
    return this.#countedWithin(this.#clock.now(), main.windowMs) + this.#inFlight < main.limit;
  }

  /** How much longer the whole budget waits out a 429's Retry-After (0: not paused). */
  pausedForMs(): number {
    return Math.max(0, this.#pausedUntil - this.#clock.now());
  }

  /** Every rule in force, for logs: `50/1000ms`, and a learned `5/1000ms` beside a `120/60000ms`. */
  describe(): string {
    return this.#rules.map((r) => `${r.limit}/${r.windowMs - this.#marginMs}ms`).join(', ');
  }

  /** Waits for a slot. The caller must call `release` exactly once when the answer (or failure) is in. */
  async acquire(signal?: AbortSignal, priority: Priority = PRIORITY.write): Promise<void> {
    if (signal?.aborted) throw signal.reason as Error;
    if (this.#waiting === 0 && this.#canStart(this.#clock.now())) {
      this.#take();
      return;
    }
    await new Promise<void>((resolve, reject) => {
      const queue = this.#waiters[priority]!;
      const grant = () => {
        signal?.removeEventListener('abort', onAbort);
        resolve();
      };
      const onAbort = () => {
        const i = queue.indexOf(grant);
        if (i >= 0) {
          queue.splice(i, 1);
          this.#waiting--;
        }
        reject(signal!.reason as Error);
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      queue.push(grant);
      this.#waiting++;
      this.#pump();
    });
  }

  /**
   * The answer is in. `rateLimited` when the server refused the call with 429 (it does not count
   * those); `retryAfterMs` comes with such a refusal.
   */
  release(outcome: SlotOutcome = {}): void {
    const now = this.#clock.now();
    this.#inFlight--;
    if (outcome.notSent) return this.#pump(); // the run stopped before it went out: it used no slot
    this.#ends.push({ at: now, counted: !outcome.rateLimited });
    if (outcome.rateLimited) this.#learn(now, outcome.retryAfterMs);
    else this.#recover(now);
    this.#pump();
  }

  #learn(now: number, retryAfterMs: number | undefined): void {
    this.rateLimitedCount++;
    this.#last429 = now;
    const main = this.#rules[0]!;
    const window = retryAfterMs !== undefined && retryAfterMs > 0 ? retryAfterMs : main.windowMs;
    const raisedJustBefore = this.#rules.find((r) => r.limit > r.knownGood && now - r.changedAt < r.windowMs * 2);
    if (raisedJustBefore) {
      // A probe above a limit that worked: go back to it. The window accounting keeps us under it.
      raisedJustBefore.limit = raisedJustBefore.knownGood;
      raisedJustBefore.changedAt = now;
      raisedJustBefore.quietWindows = Math.min(raisedJustBefore.quietWindows * 2, 64 * this.#recoverAfterPeriods);
      return;
    }
    this.#pausedUntil = Math.max(this.#pausedUntil, now + window);
    this.#burst = 1;
    this.#tokens = 0;
    this.#tokensAt = now;
    const passed = Math.max(1, this.#countedWithin(now, window));
    if (window < main.windowMs / 2) {
      const existing = this.#rules.find((r, i) => i > 0 && Math.abs(r.windowMs - window) < window / 2);
      if (existing) {
        existing.limit = Math.max(1, Math.min(existing.limit, passed));
        existing.knownGood = existing.limit;
        existing.changedAt = now;
      } else if (passed < main.limit) {
        this.#rules.push({
          limit: passed,
          windowMs: window,
          ceiling: main.ceiling,
          blockedAt: -Infinity,
          knownGood: passed,
          changedAt: now,
          quietWindows: this.#recoverAfterPeriods,
        });
      }
      return;
    }
    main.limit = Math.max(1, Math.min(main.limit, this.#countedWithin(now, main.windowMs)));
    main.knownGood = main.limit;
    main.changedAt = now;
  }

  #recover(now: number): void {
    for (const [i, rule] of this.#rules.entries()) {
      if (rule.limit >= rule.ceiling) continue;
      const quietFor = rule.quietWindows * rule.windowMs;
      if (now - Math.max(this.#last429, rule.changedAt) < quietFor || now - rule.blockedAt > rule.windowMs) continue;
      rule.knownGood = rule.limit;
      rule.limit = Math.min(rule.ceiling, rule.limit + Math.max(1, Math.round(rule.limit * RAISE_SHARE)));
      rule.changedAt = now;
      // A learned rule that reached what the configured one allows has nothing left to say.
      if (i > 0 && rule.limit >= this.#rules[0]!.limit) this.#rules.splice(i, 1);
      return;
    }
  }

  /** Calls the server counted (answered, not 429) within the last `windowMs`. */
  #countedWithin(now: number, windowMs: number): number {
    let n = 0;
    for (let i = this.#ends.length - 1; i >= this.#head && this.#ends[i]!.at > now - windowMs; i--) if (this.#ends[i]!.counted) n++;
    return n;
  }

  /** Entries (counted or not) whose answer came within the last `windowMs`: the slots they still hold. */
  #heldWithin(now: number, windowMs: number): number {
    // Binary search: ends are in time order.
    let lo = this.#head;
    let hi = this.#ends.length;
    const cutoff = now - windowMs;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (this.#ends[mid]!.at <= cutoff) lo = mid + 1;
      else hi = mid;
    }
    return this.#ends.length - lo;
  }

  /**
   * Tokens per ms: a quarter above the tightest rule's average. The window is the exact constraint;
   * the pacer only spreads calls out, and at the very same rate the two would drift out of phase and
   * leave slots unused.
   */
  #paceRate(): number {
    return PACE_HEADROOM * Math.min(...this.#rules.map((r) => r.limit / r.windowMs));
  }

  #refill(now: number): void {
    const rate = this.#paceRate();
    // Above the cap (the starting credit) nothing is added; below it, time adds tokens up to the cap.
    this.#tokens = Math.max(this.#tokens, Math.min(this.#burst, this.#tokens + (now - this.#tokensAt) * rate));
    this.#tokensAt = now;
    if (this.#burst < steadyBurst(this.#rules[0]!.limit) && now - this.#last429 > this.#rules[0]!.windowMs * this.#recoverAfterPeriods) {
      this.#burst++; // small bursts come back once the service has been quiet for a long while
    }
  }

  /** When the next slot frees up, or 0 if one is free now. */
  #nextStart(now: number): number {
    this.#prune(now);
    if (now < this.#pausedUntil) return this.#pausedUntil;
    let at = 0;
    for (const rule of this.#rules) {
      const held = this.#inFlight + this.#heldWithin(now, rule.windowMs);
      if (held < rule.limit) continue;
      rule.blockedAt = now;
      if (this.#inFlight >= rule.limit) return Infinity; // an answer frees it (release pumps)
      // The entry that must leave for a slot to free: the (held - limit + 1)-th oldest in the window.
      const entry = this.#ends[this.#ends.length - (held - this.#inFlight) + (held - rule.limit)]!;
      at = Math.max(at, entry.at + rule.windowMs);
    }
    if (at > now) return at;
    this.#refill(now);
    if (this.#tokens >= 1) return 0;
    return now + (1 - this.#tokens) / this.#paceRate();
  }

  #canStart(now: number): boolean {
    return this.#nextStart(now) === 0;
  }

  #take(): void {
    this.#inFlight++;
    this.#tokens -= 1;
  }

  #prune(now: number): void {
    // Twice our own window: a 429's Retry-After may name a longer one than ours, to count over.
    const cutoff = now - Math.max(2 * this.#rules[0]!.windowMs, ...this.#rules.map((r) => r.windowMs));
    while (this.#head < this.#ends.length && this.#ends[this.#head]!.at <= cutoff) this.#head++;
    if (this.#head > 1024 && this.#head * 2 > this.#ends.length) {
      this.#ends = this.#ends.slice(this.#head);
      this.#head = 0;
    }
  }

  #next(): (() => void) | undefined {
    for (const queue of this.#waiters) {
      const grant = queue.shift();
      if (grant) {
        this.#waiting--;
        return grant;
      }
    }
    return undefined;
  }

  #pump(): void {
    let now = this.#clock.now();
    let wakeAt = 0;
    while (this.#waiting > 0) {
      wakeAt = this.#nextStart(now);
      if (wakeAt !== 0) break;
      this.#take();
      this.#next()!();
      now = this.#clock.now();
    }
    if (this.#waiting === 0 || wakeAt === Infinity) return;
    // Nothing frees a slot but time (or an answer, which pumps): wake when the next one frees.
    if (this.#timer !== undefined && this.#timerAt <= wakeAt) return;
    if (this.#timer !== undefined) this.#clock.clearTimeout(this.#timer);
    this.#timerAt = wakeAt;
    this.#timer = this.#clock.setTimeout(
      () => {
        this.#timer = undefined;
        this.#timerAt = Infinity;
        this.#pump();
      },
      Math.max(1, Math.ceil(wakeAt - now)),
    );
  }

  /** Stops the wake-up timer (end of run). */
  dispose(): void {
    if (this.#timer !== undefined) this.#clock.clearTimeout(this.#timer);
    this.#timer = undefined;
    this.#timerAt = Infinity;
  }
}
