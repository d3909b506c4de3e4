import type { OperationKind } from '../api/types.js';
import type { Fleet } from './fleet.js';

export type OperationState = 'in_progress' | 'succeeded' | 'failed';

export interface SimOperation {
  id: string;
  kind: OperationKind;
  envId?: string;
  createdAt: number;
  completeAt: number;
  state: OperationState;
  message: string;
  apply?: () => void;
}

export const BLOCKED_MESSAGE = 'The environment is blocked by another process';

/**
 * Asynchronous work. An accepted write becomes an operation that completes `delayMs` later and only
 * then changes the fleet. Operations settle lazily, in order, whenever the simulator looks at its
 * state: no timers to leak, and a fixed delay keeps the pending list sorted by completion time.
 */
export class Operations {
  readonly all = new Map<string, SimOperation>();
  #pending: SimOperation[] = [];
  #head = 0;

  constructor(
    private readonly fleet: Fleet,
    private readonly delayMs: number,
    private readonly now: () => number,
  ) {}

  start(id: string, kind: OperationKind, envId: string | undefined, apply: () => void): SimOperation {
    this.settle();
    const now = this.now();
    const op: SimOperation = { id, kind, envId, createdAt: now, completeAt: now + this.delayMs, state: 'in_progress', message: `${kind} in progress`, apply };
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
    this.#pending.push(op);
    if (this.delayMs <= 0) this.settle();
    return op;
  }

  /** Completes every operation whose time has come. */
  settle(): void {
    const now = this.now();
    while (this.#head < this.#pending.length && this.#pending[this.#head]!.completeAt <= now) {
      const op = this.#pending[this.#head++]!;
      op.apply?.();
      op.apply = undefined;
      op.state = 'succeeded';
      op.message = `${op.kind} completed`;
      this.fleet.lastUpdatedAt = op.completeAt;
      const env = op.envId ? this.fleet.environments.get(op.envId) : undefined;
      if (env?.busyWith === op.id) env.busyWith = undefined;
    }
    if (this.#head > 1024 && this.#head * 2 > this.#pending.length) {
      this.#pending = this.#pending.slice(this.#head);
      this.#head = 0;
    }
  }

  get inProgress(): number {
    this.settle();
    return this.#pending.length - this.#head;
  }
}
