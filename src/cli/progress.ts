import type { Output } from '../app/io.js';
import { formatDuration } from '../util/duration.js';

/**
 * One status line on an interactive stderr: done/total, rate, failures, ETA. Redrawn at most five
 * times a second; nothing at all when stderr is a pipe or a file (cron, CI).
 */
export class Progress {
  #done = 0;
  #failures = 0;
  #lastDraw = 0;
  readonly #started = performance.now();
  readonly #enabled: boolean;

  constructor(
    readonly total: number,
    private readonly stream: Output,
    enabled = stream.isTTY === true,
    private readonly label = 'steps',
  ) {
    this.#enabled = enabled && total > 0;
  }

  /** Whether a line is drawn at all (an interactive stderr and something to count). */
  get enabled(): boolean {
    return this.#enabled;
  }

  /** Something to show after the counts, such as a pause the service imposed; asked at every redraw. */
  note: () => string | undefined = () => undefined;

  /** Redraws without a new step (a pause shows its countdown). */
  tick(): void {
    if (this.#done > 0 || this.note()) this.#draw(performance.now());
  }

  step(failed: boolean): void {
    this.#done++;
    if (failed) this.#failures++;
    const now = performance.now();
    if (this.#done === this.total || now - this.#lastDraw > 200) {
      this.#lastDraw = now;
      this.#draw(now);
    }
  }

  #draw(now: number): void {
    if (!this.#enabled) return;
    const elapsed = (now - this.#started) / 1000;
    const rate = elapsed > 0 ? this.#done / elapsed : 0;
    const eta = rate > 0 ? (this.total - this.#done) / rate : 0;
    const note = this.note();
    this.stream.write(
      `\r\x1b[K${this.#done}/${this.total} ${this.label}  ${rate.toFixed(1)}/s  failures ${this.#failures}  ETA ${formatDuration(eta)}${note ? `  ${note}` : ''}`,
    );
  }

  end(): void {
    if (this.#enabled) this.stream.write('\r\x1b[K');
  }
}
