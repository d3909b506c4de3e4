/**
 * How long operations of each kind take in this run, learned from the ones seen to finish.
 *
 * A poll only tells that an operation ended between the last "still running" answer and the first
 * "done" one. The estimate of a finished operation is the middle of that interval when there was an
 * earlier "running" answer, else its upper end (an operation done at the first poll could have ended
 * any time before). The prediction is a quantile of the recent estimates, not a mean: one slow
 * operation must not move every later poll, and a run is better served by most operations being done
 * when first polled than by the average one.
 */
export class DurationModel {
  readonly #samples = new Map<string, number[]>();

  constructor(
    /** Which quantile to poll at: 0.8 means four operations in five are done at their first poll. */
    readonly quantile = 0.8,
    /** Samples kept per kind (the most recent): durations drift over a long run. */
    readonly keep = 64,
    /** Samples before a prediction is made. */
    readonly minSamples = 2,
  ) {}

  /** An operation of `kind` was running `runningAt` ms after acceptance (0 if never seen running) and done at `doneAt`. */
  record(kind: string, runningAt: number, doneAt: number): void {
    const estimate = runningAt > 0 ? (runningAt + doneAt) / 2 : doneAt;
    const list = this.#samples.get(kind) ?? [];
    list.push(estimate);
    if (list.length > this.keep) list.shift();
    this.#samples.set(kind, list);
  }

  /** ms after acceptance by which most operations of `kind` are done, or undefined before enough data. */
  predict(kind: string): number | undefined {
    const list = this.#samples.get(kind);
    if (!list || list.length < this.minSamples) return undefined;
    const sorted = [...list].sort((a, b) => a - b);
    return sorted[Math.min(sorted.length - 1, Math.floor(this.quantile * sorted.length))]!;
  }
}
