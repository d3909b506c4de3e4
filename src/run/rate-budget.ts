import type { SlotOutcome } from '../coord/types.js';
import { systemClock, type Clock } from '../util/clock.js';
import { afterAnswer, afterRefusal, initialLimits, LEARNING, type Limits } from '../util/learned-limit.js';

/**
 * Who is asking for a slot. Lower goes first: a poll that a waiting write (or the end of a wave)
 * depends on, then writes, then every other poll. Polls are how a run learns what it did, but a
 * write that waits for a slot delays the whole fleet, and a poll sent later is usually answered
 * "done" at once instead of "still running".
 */
export const PRIORITY = { urgent: 0, write: 1, poll: 2 } as const;
export type Priority = (typeof PRIORITY)[keyof typeof PRIORITY];

/** The pacer runs this much faster than the window's average rate (see #paceRate). */
const PACE_HEADROOM = 1.25;

/**
 * Tokens the pacer may hold once the starting credit is spent: enough to absorb late timers at any
 * rate, small enough that a stalled event loop does not release a burst when it wakes (a burst at
 * the moment the service's limit is reached is a burst of 429s).
 */
function steadyBurst(limit: number): number {
  return Math.max(2, Math.ceil(limit / 50));
}

export interface RateBudgetOptions {
  /** @default the system clock */
  clock?: Clock;
  /**
   * Windows of a lowered rule, limited by it and without a 429, before it is raised a step.
   * @default LEARNING.recoverAfterPeriods (5)
   */
  recoverAfterPeriods?: number;
  /** How much longer our window is than the server's. @default LEARNING.marginMs (2) */
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
 * When the server answers 429 (its limit is lower, or others share the key), the budget learns by
 * the rule in util/learned-limit.ts (the one the company's Redis window follows too): it pauses for
 * Retry-After, lowers a rule to what the server let through (or learns a short-window rule for a
 * burst limit), and raises a lowered rule a step at a time once it has been quiet. Here the pause also
 * shrinks the bucket to one call, so no burst follows it. Since sends are paced, the count of what the
 * server let through is close to exact: few calls are in flight.
 *
 * Waiters are served by priority (see PRIORITY), first come first served within one.
 */
export class RateBudget {
  readonly configuredLimit: number;
  readonly #clock: Clock;
  #limits: Limits;
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
  rateLimitedCount = 0;

  constructor(limit: number, periodMs: number, options: RateBudgetOptions = {}) {
    this.configuredLimit = limit;
    this.#clock = options.clock ?? systemClock;
    this.#marginMs = options.marginMs ?? LEARNING.marginMs;
    this.#recoverAfterPeriods = options.recoverAfterPeriods ?? LEARNING.recoverAfterPeriods;
    const now = this.#clock.now();
    this.#limits = initialLimits(limit, periodMs + this.#marginMs, now, this.#recoverAfterPeriods);
    this.#burst = steadyBurst(limit);
    this.#tokens = Math.max(this.#burst, Math.ceil(limit / 4)); // the starting credit
    this.#tokensAt = now;
  }

  /** The configured rule's current limit. */
  get limit(): number {
    return this.#limits.rules[0]!.limit;
  }

  /**
   * Whether the configured rule has a free slot beside the calls in flight. A 429 while it does was
   * not this window's doing: a creating call refused under the service's creation limit.
   */
  hasRoom(): boolean {
    const main = this.#limits.rules[0]!;
    return this.#countedWithin(this.#clock.now(), main.windowMs) + this.#inFlight < main.limit;
  }

  /** How much longer the whole budget waits out a 429's Retry-After (0: not paused). */
  pausedForMs(): number {
    return Math.max(0, this.#pausedUntil - this.#clock.now());
  }

  /** Every rule in force, for logs: `50/1000ms`, and a learned `5/1000ms` beside a `120/60000ms`. */
  describe(): string {
    return this.#limits.rules.map((r) => `${r.limit}/${r.windowMs - this.#marginMs}ms`).join(', ');
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
    const { limits, pauseUntil } = afterRefusal(this.#limits, now, retryAfterMs, (windowMs) => this.#countedWithin(now, windowMs), this.#recoverAfterPeriods);
    this.#limits = limits;
    if (pauseUntil === undefined) return; // a refused raise: back to the limit that worked, no pause
    this.#pausedUntil = Math.max(this.#pausedUntil, pauseUntil);
    this.#burst = 1;
    this.#tokens = 0;
    this.#tokensAt = now;
  }

  #recover(now: number): void {
    this.#limits = afterAnswer(this.#limits, now) ?? this.#limits;
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
    return PACE_HEADROOM * Math.min(...this.#limits.rules.map((r) => r.limit / r.windowMs));
  }

  #refill(now: number): void {
    const rate = this.#paceRate();
    // Above the cap (the starting credit) nothing is added; below it, time adds tokens up to the cap.
    this.#tokens = Math.max(this.#tokens, Math.min(this.#burst, this.#tokens + (now - this.#tokensAt) * rate));
    this.#tokensAt = now;
    if (this.#burst < steadyBurst(this.#limits.rules[0]!.limit) && now - this.#limits.last429 > this.#limits.rules[0]!.windowMs * this.#recoverAfterPeriods) {
      this.#burst++; // small bursts come back once the service has been quiet for a long while
    }
  }

  /** When the next slot frees up, or 0 if one is free now. */
  #nextStart(now: number): number {
    this.#prune(now);
    if (now < this.#pausedUntil) return this.#pausedUntil;
    let at = 0;
    for (const rule of this.#limits.rules) {
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
    const cutoff = now - Math.max(2 * this.#limits.rules[0]!.windowMs, ...this.#limits.rules.map((r) => r.windowMs));
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
