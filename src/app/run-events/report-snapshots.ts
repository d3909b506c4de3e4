import type { Logger } from 'pino';
import type { Plan } from '../../plan/plan.js';
import { buildReport, writeJsonAtomic } from '../../report/report.js';
import type { StepResult } from '../../run/types.js';
import { writeOutputAsync, type OutputFile } from '../../util/output-file.js';
import { jsonText } from '../../util/safe-text.js';
import type { Subscriber } from './subscriber.js';

/** Snapshots come at least this far apart, and 50 times as far apart as one takes to build: ≤ 2% of the run. */
const REPORT_EVERY_MS = 5000;

export interface SnapshotStats {
  count: number;
  totalMs: number;
  maxMs: number;
}

/**
 * The report during the run: a compact snapshot, rewritten every few seconds when something changed,
 * written out asynchronously; only building it holds the event loop, and that is measured. The final
 * report, rebuilt from the journal, is written by the session once these have stopped (`settled`).
 */
export class ReportSnapshots implements Subscriber {
  readonly stats: SnapshotStats = { count: 0, totalMs: 0, maxMs: 0 };
  readonly #live: Map<string, StepResult>;
  #changed = true;
  #writing: Promise<void> | undefined;
  #nextAt = 0;
  readonly #timer: NodeJS.Timeout;
  readonly #output: OutputFile;

  constructor(
    readonly plan: Plan,
    readonly path: string,
    readonly run: { runId: string; startedAt: Date; initial?: Map<string, StepResult> },
    readonly logger: Logger,
    /** How often a changed report is looked at to be written (a test's own pace). @default 1000 */
    everyMs = 1000,
  ) {
    this.#live = new Map(run.initial ?? []);
    this.#output = { flag: 'report', path, kind: 'report' };
    writeJsonAtomic(this.#output, this.#build());
    this.#timer = setInterval(() => void this.#write(), everyMs);
    this.#timer.unref();
  }

  onEvent(event: Parameters<Subscriber['onEvent']>[0]): void {
    if (event.type !== 'result' && event.type !== 'update') return;
    this.#live.set(event.step.id, event.result);
    this.#changed = true;
  }

  end(): void {
    clearInterval(this.#timer);
  }

  /** Resolves when no snapshot is being written: one must not land after the final report. */
  async settled(): Promise<void> {
    await this.#writing;
  }

  #build() {
    return buildReport({ plan: this.plan, mode: 'run', startedAt: this.run.startedAt, finishedAt: new Date(), results: this.#live, runId: this.run.runId });
  }

  #write(): Promise<void> | undefined {
    if (!this.#changed || this.#writing || performance.now() < this.#nextAt) return;
    this.#changed = false;
    const t0 = performance.now();
    const text = jsonText(this.#build());
    const ms = performance.now() - t0;
    this.stats.count++;
    this.stats.totalMs += ms;
    this.stats.maxMs = Math.max(this.stats.maxMs, ms);
    this.#nextAt = performance.now() + Math.max(REPORT_EVERY_MS, 50 * ms);
    this.#writing = writeOutputAsync(this.#output, text)
      .catch((error: Error) => void this.logger.warn({ err: error.message }, 'could not write the report snapshot'))
      .finally(() => (this.#writing = undefined));
    return this.#writing;
  }
}
