import type { OperationKind } from '../api/types.js';
import type { Fleet } from './fleet.js';
import type { Random } from './random.js';

export type OperationState = 'in_progress' | 'succeeded' | 'failed';

export interface SimOperation {
  id: string;
  kind: OperationKind;
  envId?: string;
  createdAt: number;
  completeAt: number;
  state: OperationState;
  message: string;
  /** The work, done when the operation completes (never when it fails); returns what it produced, if anything. */
  apply?: OperationWork;
  /**
   * What the finished operation produced (`{idEnv}`, `{idSite}`, `{result}`): null while it runs,
   * when it failed, or when the work produced nothing. Only the `real` profile's answers show it.
   */
  data: OperationData;
  /** Fails at its end instead of completing, with this message (a drawn failure, or one the handler foresaw). */
  failsWith?: string;
}

/** What a finished operation carries in `data`, as the real service's recordings show it. */
export type OperationData = Readonly<Record<string, string>> | null;

/** An operation's work: it changes the fleet, and may say what it produced (nothing is `data: null`). */
export type OperationWork = () => OperationData | void;

export const BLOCKED_MESSAGE = 'The environment is blocked by another process';

/** How long an operation runs: a fixed time, or a range drawn from (seeded) per operation. */
export type OperationDelay = number | [min: number, max: number];

/**
 * Asynchronous work. An accepted write becomes an operation that completes some time later and only
 * then changes the fleet. Operations settle lazily, in completion order, whenever the simulator looks
 * at its state: no timers to leak. Pending operations sit in a binary min-heap on `completeAt`, so
 * durations drawn from a range still settle in the order they finish.
 */
export class Operations {
  readonly all = new Map<string, SimOperation>();
  readonly #heap: SimOperation[] = [];

  constructor(
    private readonly fleet: Fleet,
    private readonly delay: OperationDelay,
    private readonly now: () => number,
    private readonly rng?: Random,
    /** Share of operations that fail at their end (the work was accepted, then went wrong). */
    private readonly failShare = 0,
    /** A separate generator for failures, so that adding them does not change the durations drawn. */
    private readonly failRng?: Random,
  ) {}

  #duration(): number {
    if (typeof this.delay === 'number') return this.delay;
    const [min, max] = this.delay;
    return this.rng ? this.rng.int(min, max) : min;
  }

  /** Starts an operation; `failsWith` makes it fail at its end whatever the drawn failures say. */
  start(id: string, kind: OperationKind, envId: string | undefined, apply: OperationWork, failsWith?: string): SimOperation {
    this.settle();
    const now = this.now();
    const duration = this.#duration();
    const op: SimOperation = {
      id,
      kind,
      envId,
      createdAt: now,
      completeAt: now + duration,
      state: 'in_progress',
      message: `${kind} in progress`,
      apply,
      data: null,
    };
    this.all.set(id, op);
    const env = envId ? this.fleet.environments.get(envId) : undefined;
    if (env?.busyWith) {
      // As on the real service: accepted with 202, then failed because the environment is busy.
      op.state = 'failed';
      op.message = BLOCKED_MESSAGE;
      op.apply = undefined;
      return op;
    }
    if (env) env.busyWith = id;
    // Drawn even when the handler foresaw the failure, so that later draws stay where they were.
    if (this.failShare > 0 && this.failRng?.chance(this.failShare))
      op.failsWith = `${kind} failed${env ? ` on ${this.fleet.sites.get(env.siteId)?.displayName}/${env.displayName}` : ''}: the service could not complete the change`;
    if (failsWith !== undefined) op.failsWith = failsWith;
    this.#push(op);
    if (duration <= 0) this.settle();
    return op;
  }

  /** Completes every operation whose time has come. */
  settle(): void {
    const now = this.now();
    while (this.#heap.length > 0 && this.#heap[0]!.completeAt <= now) {
      const op = this.#pop();
      // Before its work, which stamps what it makes (a manual backup's created_at) with this moment.
      this.fleet.lastUpdatedAt = op.completeAt;
      if (op.failsWith === undefined) op.data = op.apply?.() ?? null;
      op.apply = undefined;
      op.state = op.failsWith === undefined ? 'succeeded' : 'failed';
      op.message = op.failsWith ?? `${op.kind} completed`;
      const env = op.envId ? this.fleet.environments.get(op.envId) : undefined;
      if (env?.busyWith === op.id) env.busyWith = undefined;
    }
  }

  get inProgress(): number {
    this.settle();
    return this.#heap.length;
  }

  #push(op: SimOperation): void {
    const heap = this.#heap;
    heap.push(op);
    for (let i = heap.length - 1; i > 0;) {
      const parent = (i - 1) >> 1;
      if (heap[parent]!.completeAt <= heap[i]!.completeAt) break;
      [heap[parent], heap[i]] = [heap[i]!, heap[parent]!];
      i = parent;
    }
  }

  #pop(): SimOperation {
    const heap = this.#heap;
    const top = heap[0]!;
    const last = heap.pop()!;
    if (heap.length > 0) {
      heap[0] = last;
      for (let i = 0; ;) {
        const l = 2 * i + 1;
        const r = l + 1;
        let least = i;
        if (l < heap.length && heap[l]!.completeAt < heap[least]!.completeAt) least = l;
        if (r < heap.length && heap[r]!.completeAt < heap[least]!.completeAt) least = r;
        if (least === i) break;
        [heap[least], heap[i]] = [heap[i]!, heap[least]!];
        i = least;
      }
    }
    return top;
  }
}
