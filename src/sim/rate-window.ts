/**
 * A sliding window per token, as a real API gateway counts: a request is counted when it arrives,
 * and is refused when `limit` requests already arrived in the last `periodMs`. Refused requests are
 * not counted.
 */
export class SlidingWindow {
  #times: number[] = [];
  #head = 0;

  constructor(
    readonly limit: number,
    readonly periodMs: number,
  ) {}

  /** 0 when a request arriving now would be let through, else how many ms until a slot frees up. */
  wait(now: number): number {
    while (this.#head < this.#times.length && this.#times[this.#head]! <= now - this.periodMs) this.#head++;
    if (this.#head > 4096) {
      this.#times = this.#times.slice(this.#head);
      this.#head = 0;
    }
    return this.#times.length - this.#head >= this.limit ? this.#times[this.#head]! + this.periodMs - now : 0;
  }

  /** Counts the request and returns 0, or returns how many ms until a slot frees up. */
  take(now: number): number {
    const waitMs = this.wait(now);
    if (waitMs === 0) this.#times.push(now);
    return waitMs;
  }
}

export { parseRate } from '../util/rate.js';
