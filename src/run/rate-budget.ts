/**
 * The API budget shared by every call of a run: at most `limit` calls in any window of `periodMs`,
 * counted as the server counts them.
 *
 * The server counts a call when it arrives, which the client only knows lies between sending it and
 * hearing the answer. So a call holds its slot from the moment it is sent until one period after its
 * answer: whatever the network did, the server can never see more than `limit` arrivals in a window.
 *
 * When the server still answers 429 (the real limit is lower than configured, or others share the
 * key), the budget learns: the calls it counted in the window are what the server allowed, so the
 * effective limit drops to that (at most halving at once), the whole budget pauses for Retry-After,
 * and it creeps back up by one after every `recoverAfterPeriods` periods without a 429.
 */
export class RateBudget {
  readonly configuredLimit: number;
  #limit: number;
  readonly #periodMs: number;
  readonly #now: () => number;
  /** End times of answered calls (monotonic, since they are "now" when recorded), and whether the server counted each. */
  #ends: { at: number; counted: boolean }[] = [];
  #head = 0;
  #inFlight = 0;
  #pausedUntil = 0;
  #waiters: (() => void)[] = [];
  #timer: NodeJS.Timeout | undefined;
  #last429 = -Infinity;
  #lastRaise = -Infinity;
  readonly #recoverAfterMs: number;
  rateLimitedCount = 0;

  constructor(limit: number, periodMs: number, options: { now?: () => number; recoverAfterPeriods?: number; marginMs?: number } = {}) {
    this.configuredLimit = limit;
    this.#limit = limit;
    // A small margin absorbs the difference between our clock and the server's rounding.
    this.#periodMs = periodMs + (options.marginMs ?? 2);
    this.#now = options.now ?? (() => performance.now());
    this.#recoverAfterMs = (options.recoverAfterPeriods ?? 10) * periodMs;
  }

  get limit(): number {
    return this.#limit;
  }

  /** Waits for a slot. The caller must call `release` exactly once when the answer (or failure) is in. */
  async acquire(signal?: AbortSignal): Promise<void> {
    this.#prune();
    if (this.#waiters.length === 0 && this.#canStart()) {
      this.#inFlight++;
      return;
    }
    await new Promise<void>((resolve, reject) => {
      const grant = () => {
        signal?.removeEventListener('abort', onAbort);
        resolve();
      };
      const onAbort = () => {
        const i = this.#waiters.indexOf(grant);
        if (i >= 0) this.#waiters.splice(i, 1);
        reject(signal!.reason);
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      this.#waiters.push(grant);
      this.#pump();
    });
  }

  /**
   * The answer is in. `counted` is false when the server refused the call with 429 (it does not count
   * those); `retryAfterMs` comes with such a refusal.
   */
  release(outcome: { rateLimited?: boolean; retryAfterMs?: number } = {}): void {
    const now = this.#now();
    this.#inFlight--;
    this.#ends.push({ at: now, counted: !outcome.rateLimited });
    if (outcome.rateLimited) this.#learn(now, outcome.retryAfterMs);
    else this.#recover(now);
    this.#pump();
  }

  #learn(now: number, retryAfterMs: number | undefined): void {
    this.rateLimitedCount++;
    this.#last429 = now;
    this.#prune();
    let counted = 0;
    for (let i = this.#head; i < this.#ends.length; i++) if (this.#ends[i]!.counted) counted++;
    this.#limit = Math.max(1, Math.min(this.#limit, Math.max(counted, Math.ceil(this.#limit / 2))));
    this.#pausedUntil = Math.max(this.#pausedUntil, now + (retryAfterMs ?? 1000));
  }

  #recover(now: number): void {
    if (this.#limit >= this.configuredLimit) return;
    const since = Math.max(this.#last429, this.#lastRaise);
    if (now - since < this.#recoverAfterMs) return;
    this.#limit++;
    this.#lastRaise = now;
  }

  #prune(): void {
    const cutoff = this.#now() - this.#periodMs;
    while (this.#head < this.#ends.length && this.#ends[this.#head]!.at <= cutoff) this.#head++;
    if (this.#head > 1024 && this.#head * 2 > this.#ends.length) {
      this.#ends = this.#ends.slice(this.#head);
      this.#head = 0;
    }
  }

  #canStart(): boolean {
    return this.#now() >= this.#pausedUntil && this.#inFlight + (this.#ends.length - this.#head) < this.#limit;
  }

  #pump(): void {
    this.#prune();
    while (this.#waiters.length > 0 && this.#canStart()) {
      this.#inFlight++;
      this.#waiters.shift()!();
    }
    if (this.#waiters.length === 0 || this.#timer) return;
    // Nothing frees a slot but time (or an answer, which calls pump): wake when the oldest entry leaves.
    const now = this.#now();
    const oldest = this.#head < this.#ends.length ? this.#ends[this.#head]!.at + this.#periodMs : Infinity;
    const wakeAt = now < this.#pausedUntil ? this.#pausedUntil : oldest;
    if (wakeAt === Infinity) return;
    this.#timer = setTimeout(() => {
      this.#timer = undefined;
      this.#pump();
    }, Math.max(1, Math.ceil(wakeAt - now)));
  }

  /** Stops the wake-up timer (end of run). */
  dispose(): void {
    if (this.#timer) clearTimeout(this.#timer);
    this.#timer = undefined;
  }
}
