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

  /** Counts the request and returns 0, or returns how many ms until a slot frees up. */
  take(now: number): number {
    while (this.#head < this.#times.length && this.#times[this.#head]! <= now - this.periodMs) this.#head++;
    if (this.#head > 4096) {
      this.#times = this.#times.slice(this.#head);
      this.#head = 0;
    }
    if (this.#times.length - this.#head >= this.limit) return this.#times[this.#head]! + this.periodMs - now;
    this.#times.push(now);
    return 0;
  }
}

export { parseRate } from '../util/rate.js';
