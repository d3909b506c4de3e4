import type { OperationStatus } from '../api/types.js';
import type { StopKind } from './types.js';
import { systemClock, type Clock } from '../util/clock.js';
import type { Outcome } from './caller.js';
import { DurationModel } from './duration-model.js';
import { PRIORITY, type Priority } from './rate-budget.js';

export type Tracked =
  /** `data`: what the finished operation's answer carried (see answer.ts `operationData`). */
  | { state: 'succeeded'; message?: string; data?: unknown; polls: number }
  /** `message`: the most specific reason the answer gave; `context`: the outer text it was nested under. */
  | { state: 'failed'; message: string; context?: string; polls: number }
  /** Gave up: timed out, or the id stayed unknown to the service. */
  | { state: 'unknown'; message: string; polls: number; timedOut?: boolean }
  /** Stopped watching (interrupted, or the status could not be read); the operation may still run. */
  | { state: 'untracked'; message: string; polls: number; stop?: StopKind };

/** One look at an operation's status, through the run's rate budget. */
export type PollFn = (operationId: string, options: { priority: Priority; stopSignal?: AbortSignal }) => Promise<Outcome<OperationStatus>>;

export interface WatchOptions {
  /** Give up (the step ends `unknown`) this long after acceptance. */
  timeoutMs: number;
  /** A 404 this soon after acceptance means "not visible yet" (the real service lags a few seconds). */
  notFoundGraceMs: number;
  /** Accepted at an unknown earlier time (resume, `status`): look once at once; learn the time left, apart from fresh ones. */
  unknownAge?: boolean;
  /**
   * Stops this watch alone (it ends `untracked`), before the watcher's own stop: an unguarded write's
   * operation is let go at a run's first stop, while a guarded write's life is followed on. @default none
   */
  until?: AbortSignal;
}

export interface WatcherOptions {
  /** @default the system clock */
  clock?: Clock;
  /** Stops all watching: every pending watch ends `untracked` at once. @default none */
  signal?: AbortSignal;
  /** First probe poll, after acceptance; probes then grow by half (1, 1.5, 2.25 s…). @default 1000 */
  firstPollMs?: number;
  /** The longest gap between two polls of one operation. @default 15000 */
  maxIntervalMs?: number;
  /** Operations of a kind probed at once while nothing is known of the kind. @default 3 */
  probes?: number;
  /** What the watcher learns of how long each kind takes. @default a new DurationModel */
  model?: DurationModel;
}

export interface Watch {
  done: Promise<Tracked>;
  /** Something waits for this operation (a write to its environment, the end of a wave): its polls go before writes. */
  expedite(): void;
}

interface Entry {
  id: string;
  kind: string;
  acceptedAt: number;
  options: WatchOptions;
  urgent: boolean;
  probe: boolean;
  parked: boolean;
  polls: number;
  /** Polls since the predicted moment passed: the short schedule grows with them. */
  late: number;
  /** ms after acceptance of the last "still running" answer (0: none yet). */
  runningAt: number;
  failedOnce?: string;
  timer?: unknown;
  /** When the timer fires (clock time). */
  dueAt?: number;
  resolve(tracked: Tracked): void;
}

/** How many ended operations a watcher remembers: a few MB at most, whatever the fleet. */
const ENDED_KEPT = 10_000;

/** The shortest gap between polls of one operation that is late: a tenth of a second is below any API's pace. */
const MIN_GAP_MS = 100;
/**
 * Each probe poll comes this many times as long after acceptance as the one before (1, 1.5, 2.25,
 * 3.4 s…). Doubling would find a 9 s operation done only at 16 s and teach 12 s; a few more polls
 * on a few probes buy a prediction that every other operation of the kind is polled by.
 */
const PROBE_GROWTH = 1.5;

/**
 * One owner for every operation a run (or `status`, or `resume`) waits for. Sending and watching are
 * separate jobs: a watched operation holds no send slot, and its polls go through the rate budget at
 * poll priority, behind writes, unless something waits for it (`expedite`).
 *
 * Each operation is polled close to when it is likely done: the DurationModel learns, per kind, how
 * long operations take in this run. Until it knows a kind, a few operations of it are probed on a
 * growing schedule and the rest are parked until those teach something; a large task's writes are
 * usually all accepted before its first operation ends, and polling each of them "to find out" would
 * cost several polls apiece. An operation not done at its predicted moment is polled again on a short
 * schedule that grows by half each time.
 *
 * Kept from the first tracker: a 404 within the grace period means "not visible yet"; a 500 is read a
 * second time before it counts as the operation's failure (a passing server error looks the same);
 * after the timeout the operation is `unknown`.
 */
export class Watcher {
  readonly #poll: PollFn;
  readonly #clock: Clock;
  readonly #signal?: AbortSignal;
  readonly #firstPollMs: number;
  readonly #maxIntervalMs: number;
  readonly #probes: number;
  readonly model: DurationModel;
  readonly #entries = new Set<Entry>();
  readonly #probing = new Map<string, number>();
  readonly #parked = new Map<string, Entry[]>();
  /**
   * Operations seen to end (succeeded or failed), the newest ENDED_KEPT: an ended operation does not
   * change, so watching it again is answered at once, not polled. An isolation round follows each of
   * its writes before the next leaves, then the round's operations together: each of those polls came
   * a predicted duration after the second watch began (5 writes of a round: 5 s of nothing).
   */
  readonly #ended = new Map<string, Tracked>();
  polls = 0;

  constructor(poll: PollFn, options: WatcherOptions = {}) {
    this.#poll = poll;
    this.#clock = options.clock ?? systemClock;
    this.#signal = options.signal;
    this.#firstPollMs = options.firstPollMs ?? 1000;
    this.#maxIntervalMs = options.maxIntervalMs ?? 15_000;
    this.#probes = options.probes ?? 3;
    this.model = options.model ?? new DurationModel();
    this.#signal?.addEventListener('abort', () => this.#stopAll(), { once: true });
  }

  /** ms until the next poll is due, or undefined when none is waiting for its moment. */
  nextPollIn(): number | undefined {
    let soonest = Infinity;
    for (const e of this.#entries) if (e.timer !== undefined && e.dueAt !== undefined) soonest = Math.min(soonest, e.dueAt);
    return soonest === Infinity ? undefined : soonest - this.#clock.now();
  }

  /** Operations being watched. */
  get pending(): number {
    return this.#entries.size;
  }

  watch(operationId: string, kind: string, options: WatchOptions, acceptedAt = this.#clock.now()): Watch {
    const ended = this.#ended.get(operationId);
    if (ended) return { done: Promise.resolve({ ...ended, polls: 0 }), expedite: () => undefined };
    let entry!: Entry;
    // Operations of unknown age (a report's, a resumed run's) learn apart: what they teach is the
    // time left from now, which says nothing of how long a fresh operation of the kind takes.
    const learnAs = options.unknownAge ? `${kind} (already running)` : kind;
    const done = new Promise<Tracked>((resolve) => {
      entry = { id: operationId, kind: learnAs, acceptedAt, options, urgent: false, probe: false, parked: false, polls: 0, late: 0, runningAt: 0, resolve };
    });
    if (this.#signal?.aborted || options.until?.aborted) {
      entry.resolve({ state: 'untracked', message: 'stopped watching the operation: run interrupted', polls: 0 });
    } else {
      this.#entries.add(entry);
      this.#schedule(entry);
      const until = options.until;
      if (until) {
        const off = () =>
          this.#entries.has(entry) && this.#finish(entry, { state: 'untracked', message: 'stopped watching the operation: run stopped', polls: entry.polls });
        until.addEventListener('abort', off, { once: true });
        void done.then(() => until.removeEventListener('abort', off));
      }
    }
    return { done, expedite: () => void (entry.urgent = true) };
  }

  #schedule(entry: Entry): void {
    const now = this.#clock.now();
    const elapsed = now - entry.acceptedAt;
    const deadline = entry.acceptedAt + entry.options.timeoutMs;
    let at: number;
    const predicted = this.model.predict(entry.kind);
    if (entry.options.unknownAge && entry.polls === 0) {
      at = now;
    } else if (entry.failedOnce !== undefined) {
      at = now + Math.min(1000, this.#firstPollMs);
    } else if (predicted !== undefined && !entry.probe) {
      if (entry.polls === 0) {
        at = Math.max(now, entry.acceptedAt + predicted);
      } else {
        at = now + Math.min(this.#maxIntervalMs, Math.max(MIN_GAP_MS, predicted * 0.25 * 1.5 ** entry.late));
        entry.late++;
      }
    } else if (entry.probe || (this.#probing.get(entry.kind) ?? 0) < this.#probes) {
      if (!entry.probe) this.#probing.set(entry.kind, (this.#probing.get(entry.kind) ?? 0) + 1);
      entry.probe = true;
      at = entry.acceptedAt + Math.max(this.#firstPollMs, Math.min(PROBE_GROWTH * elapsed, elapsed + this.#maxIntervalMs));
    } else {
      // Parked: polled when a probe of its kind teaches something, or once at its deadline.
      entry.parked = true;
      const list = this.#parked.get(entry.kind) ?? [];
      list.push(entry);
      this.#parked.set(entry.kind, list);
      at = deadline;
    }
    at = Math.min(at, deadline);
    entry.dueAt = at;
    entry.timer = this.#clock.setTimeout(() => void this.#look(entry), Math.max(0, at - now));
  }

  async #look(entry: Entry): Promise<void> {
    entry.timer = undefined;
    if (entry.parked) this.#unpark(entry);
    if (!this.#entries.has(entry)) return;
    entry.polls++;
    this.polls++;
    // A probe teaches when every parked operation of its kind is due: it goes along with the writes.
    const priority = entry.urgent ? PRIORITY.urgent : entry.probe ? PRIORITY.write : PRIORITY.poll;
    const outcome = await this.#poll(entry.id, { priority, stopSignal: this.#signal });
    if (!this.#entries.has(entry)) return; // stopped while the poll was out
    const elapsed = this.#clock.now() - entry.acceptedAt;
    if (!outcome.ok) {
      const decision = outcome.decision;
      return this.#finish(entry, {
        state: 'untracked',
        message: `could not read the operation status: ${decision?.reason ?? String(outcome.error)}`,
        polls: entry.polls,
        stop: decision?.kind === 'stop' ? decision.stop : undefined,
      });
    }
    const status = outcome.value!;
    if (status.state === 'succeeded') {
      this.model.record(entry.kind, entry.runningAt, elapsed);
      return this.#finish(entry, { state: 'succeeded', message: status.message, data: status.data, polls: entry.polls });
    }
    if (status.state === 'failed') {
      if (entry.failedOnce !== undefined) {
        const context = status.message === undefined ? undefined : status.context;
        return this.#finish(entry, {
          state: 'failed',
          message: status.message ?? entry.failedOnce,
          ...(context !== undefined && { context }),
          polls: entry.polls,
        });
      }
      entry.failedOnce = status.message ?? 'operation failed';
      return this.#schedule(entry);
    }
    entry.failedOnce = undefined;
    if (status.state === 'not_found' && elapsed > entry.options.notFoundGraceMs) {
      return this.#finish(entry, {
        state: 'unknown',
        message: `the service does not know operation ${entry.id} (404 for ${Math.round(elapsed / 1000)}s)`,
        polls: entry.polls,
      });
    }
    if (status.state === 'in_progress') entry.runningAt = elapsed;
    if (elapsed >= entry.options.timeoutMs) {
      return this.#finish(entry, {
        state: 'unknown',
        message: `operation still in progress after ${Math.round(elapsed / 1000)}s (timeout); check it with \`sitefleet status\``,
        polls: entry.polls,
        timedOut: true,
      });
    }
    this.#schedule(entry);
  }

  #finish(entry: Entry, tracked: Tracked): void {
    if (!this.#entries.delete(entry)) return;
    if (tracked.state === 'succeeded' || tracked.state === 'failed') this.#remember(entry.id, tracked);
    if (entry.timer !== undefined) this.#clock.clearTimeout(entry.timer);
    if (entry.parked) this.#unpark(entry);
    entry.resolve(tracked);
    if (entry.probe) {
      this.#probing.set(entry.kind, (this.#probing.get(entry.kind) ?? 1) - 1);
      this.#wakeParked(entry.kind);
    }
  }

  /** A probe of `kind` ended: the parked operations get their predicted poll, or one of them becomes a probe. */
  #wakeParked(kind: string): void {
    const list = this.#parked.get(kind);
    if (!list || list.length === 0) return;
    const wake = this.model.predict(kind) !== undefined ? list.splice(0) : list.splice(0, 1);
    for (const entry of wake) {
      entry.parked = false;
      if (entry.timer !== undefined) this.#clock.clearTimeout(entry.timer);
      this.#schedule(entry);
    }
  }

  #remember(id: string, tracked: Tracked): void {
    this.#ended.set(id, tracked);
    // The oldest goes first (a Map keeps its order): one watched again is watched soon after it ended.
    if (this.#ended.size > ENDED_KEPT) this.#ended.delete(this.#ended.keys().next().value!);
  }

  #unpark(entry: Entry): void {
    entry.parked = false;
    const list = this.#parked.get(entry.kind);
    const i = list?.indexOf(entry) ?? -1;
    if (i >= 0) list!.splice(i, 1);
  }

  #stopAll(): void {
    for (const entry of [...this.#entries])
      this.#finish(entry, { state: 'untracked', message: 'stopped watching the operation: run interrupted', polls: entry.polls });
  }
}

/** How a run watches operations; a task's `timeout` overrides `timeoutMs`. */
export interface TrackOptions {
  /** First probe poll of a kind not yet learned; probes then double. */
  intervalMs: number;
  /** The longest gap between two polls of one operation. */
  maxIntervalMs: number;
  /** Give up (the step ends `unknown`) after this long. */
  timeoutMs: number;
  /**
   * A 404 this soon after acceptance means "not visible yet": public clients of the real service
   * allow 30 to 60 s (site creation the longest), so a minute by default (`settings.not_found_grace`).
   */
  notFoundGraceMs: number;
}

export const DEFAULT_TRACKING: TrackOptions = { intervalMs: 1000, maxIntervalMs: 15_000, timeoutMs: 30 * 60_000, notFoundGraceMs: 60_000 };

/**
 * The one way a command builds its watcher (run, restore, status): it polls through `caller`, so each
 * poll takes a place and a slot of the budget like any call; at the run's tracking intervals; and it
 * stops at `signal` (Ctrl-C, a stopped run, a lost coordination).
 */
export function watcherFor(caller: { poll: PollFn }, tracking: Partial<TrackOptions>, signal: AbortSignal, clock?: Clock): Watcher {
  return new Watcher((id, o) => caller.poll(id, o), {
    signal,
    firstPollMs: tracking.intervalMs,
    maxIntervalMs: tracking.maxIntervalMs,
    ...(clock ? { clock } : {}),
  });
}

/** How long one of a task's operations is watched: its own `timeout`, else the run's; the run's 404 grace. */
export function taskWatch(task: { timeout_ms?: number }, tracking: Partial<TrackOptions>, unknownAge = false): WatchOptions {
  const { timeoutMs, notFoundGraceMs } = { ...DEFAULT_TRACKING, ...tracking };
  return { timeoutMs: task.timeout_ms ?? timeoutMs, notFoundGraceMs, unknownAge };
}
