import type { RunEvent } from '../run/types.js';
import { isProblem } from '../run/types.js';
import { formatDuration } from '../util/duration.js';

/**
 * Where a run stands, from its events: steps sent, operations still running (of tasks that wait
 * for them), done and failed, and an ETA that counts the waiting. The run's own measure of how long
 * an operation takes (acceptance to end, as this run saw it) gives the wait after the last send.
 */
export class RunPhase {
  sent = 0;
  done = 0;
  failed = 0;
  /** Steps the run will send: those it ends unsent (skipped) drop out. */
  total: number;
  readonly #running = new Map<string, number>();
  /** How each ended step is counted now: a later word (a health check, verify) may move it. */
  readonly #ended = new Map<string, 'done' | 'failed'>();
  #firstSentAt: number | undefined;
  #durationSum = 0;
  #durations = 0;

  constructor(
    total: number,
    /** Tasks whose operations the run follows to their end. */
    private readonly waits: ReadonlySet<number>,
  ) {
    this.total = total;
  }

  get running(): number {
    return this.#running.size;
  }

  onEvent(event: RunEvent, now: number): void {
    if (event.type !== 'result' && event.type !== 'update') return;
    const { step, result } = event;
    if (event.type === 'result') {
      if (result.status === 'skipped') this.total--;
      else this.sent++;
      this.#firstSentAt ??= now;
    }
    if (result.status === 'accepted' && result.operation_id && this.waits.has(step.task_index)) {
      if (!this.#running.has(step.id)) this.#running.set(step.id, now);
      return;
    }
    const started = this.#running.get(step.id);
    if (started !== undefined) {
      this.#running.delete(step.id);
      this.#durationSum += now - started;
      this.#durations++;
    }
    const kind = isProblem(result.status) ? 'failed' : result.status === 'skipped' ? undefined : 'done';
    const before = this.#ended.get(step.id);
    if (before === kind) return;
    if (before) this[before]--;
    if (kind) {
      this[kind]++;
      this.#ended.set(step.id, kind);
    } else this.#ended.delete(step.id);
  }

  /** ms until the run should end, or undefined while nothing tells (no send yet, no operation ended yet). */
  etaMs(now: number, nextLookMs?: number): number | undefined {
    const left = this.total - this.sent;
    let sending = 0;
    if (left > 0) {
      if (this.#firstSentAt === undefined || now <= this.#firstSentAt || this.sent < 2) return undefined;
      sending = (left * (now - this.#firstSentAt)) / this.sent;
    }
    if (this.waits.size === 0 || (this.#running.size === 0 && left === 0)) return sending;
    const wait = this.#waitMs(now, nextLookMs);
    if (wait === undefined) return undefined;
    return Math.max(sending + (left > 0 ? this.#durationSum / this.#durations : 0), wait);
  }

  /** ms until the operations running now should have ended: none is done before the next look at it. */
  #waitMs(now: number, nextLookMs: number | undefined): number | undefined {
    if (this.#running.size === 0) return 0;
    if (this.#durations === 0) return undefined;
    const typical = this.#durationSum / this.#durations;
    const lastRunning = Math.max(0, ...[...this.#running.values()].map((at) => at + typical - now));
    return Math.max(lastRunning, nextLookMs ?? 0);
  }

  /** The status line: `sending 120/558 · 80 running · 30 done · 1 failed · ETA 40s`, then `waiting for 12 operations …` once all is sent. */
  line(now: number, nextLookMs?: number, closed = false): string {
    const counts = `${this.done} done · ${this.failed} failed`;
    const next = nextLookMs === undefined ? '' : ` · next poll in ${formatDuration(Math.max(0, nextLookMs) / 1000)}`;
    const waiting = `waiting for ${this.running} operation${this.running === 1 ? '' : 's'} · ${counts}${next}`;
    // Once the window closed nothing more is sent: what is left is the wait for the operations.
    if (closed && this.sent < this.total) return `window closed, ${this.total - this.sent} not sent · ${waiting}${this.#eta(now, nextLookMs, true)}`;
    if (this.sent < this.total) return `sending ${this.sent}/${this.total} · ${this.running} running · ${counts}${this.#eta(now, nextLookMs)}`;
    return `all ${this.total} sent · ${waiting}${this.#eta(now, nextLookMs)}`;
  }

  #eta(now: number, nextLookMs: number | undefined, sendingOver = false): string {
    const eta = sendingOver ? this.#waitMs(now, nextLookMs) : this.etaMs(now, nextLookMs);
    return eta === undefined ? '' : ` · ETA ${formatDuration(eta / 1000)}`;
  }
}
