import { setTimeout as sleep } from 'node:timers/promises';
import type { Logger } from 'pino';
import type { CallResult, HostingClient } from '../api/client.js';
import type { EndpointName } from '../api/endpoints.js';
import type { OperationStatus } from '../api/types.js';
import { AbortedError, RateLimitError } from '../errors.js';
import type { RateBudget } from './rate-budget.js';
import { decide, DEFAULT_RETRY, type Decision, type RetryPolicy } from './retry.js';

export interface Outcome<T> {
  ok: boolean;
  value?: T;
  error?: unknown;
  decision?: Decision;
  attempts: number;
}

export type CallOutcome = Outcome<CallResult>;

export interface CallHooks {
  /** Called right before each attempt is sent (the journal records intent here). */
  beforeAttempt?(attempt: number): void | Promise<void>;
  /** Stops starting new attempts (and waiting for a slot); a call in flight ends normally. */
  stopSignal?: AbortSignal;
  /** The body was checked against its schema when the plan was built. */
  prevalidated?: boolean;
}

/**
 * Every request of a run goes through here: it takes a slot of the shared rate budget, sends, gives
 * the slot back, and retries by error class. Reads and operation polls use it as well as writes, so
 * everything counts against the one budget the service enforces.
 */
export class Caller {
  constructor(
    readonly client: HostingClient,
    readonly budget: RateBudget | undefined,
    readonly logger: Logger,
    readonly retry: RetryPolicy = DEFAULT_RETRY,
  ) {}

  call(endpoint: EndpointName, params: Record<string, string>, body: unknown, idempotent: boolean, hooks: CallHooks = {}): Promise<CallOutcome> {
    return this.#withRetries(() => this.client.call(endpoint, params, body, { prevalidated: hooks.prevalidated }), idempotent, hooks, endpoint);
  }

  /** One look at an operation's status (a GET: always safe to repeat). */
  poll(operationId: string, hooks: CallHooks = {}): Promise<Outcome<OperationStatus>> {
    return this.#withRetries(() => this.client.getOperation(operationId), true, hooks, 'getOperation');
  }

  /** A read that must succeed (inventory): retried like any safe call; its final error is thrown. */
  async read<T>(endpoint: EndpointName, params: Record<string, string>, body?: unknown): Promise<T> {
    const outcome = await this.call(endpoint, params, body, true);
    if (!outcome.ok) throw outcome.error;
    return outcome.value!.data as T;
  }

  async #withRetries<T>(send: () => Promise<T>, idempotent: boolean, hooks: CallHooks, label: string): Promise<Outcome<T>> {
    const notSent = (attempts: number): Outcome<T> => ({ ok: false, error: new AbortedError('run interrupted'), decision: { kind: 'failed', reason: 'not sent: run interrupted' }, attempts });
    for (let attempt = 1; ; attempt++) {
      if (hooks.stopSignal?.aborted) return notSent(attempt - 1);
      try {
        await this.budget?.acquire(hooks.stopSignal);
      } catch {
        return notSent(attempt - 1);
      }
      let released = false;
      const release = (outcome?: { rateLimited: boolean; retryAfterMs?: number }) => {
        if (!released) this.budget?.release(outcome);
        released = true;
      };
      let decision: Decision;
      try {
        await hooks.beforeAttempt?.(attempt);
        const value = await send();
        release();
        return { ok: true, value, attempts: attempt };
      } catch (error) {
        const limited = error instanceof RateLimitError;
        release({ rateLimited: limited, retryAfterMs: limited ? error.retryAfterMs : undefined });
        decision = decide(error, attempt, idempotent, this.retry);
        this.logger.debug({ call: label, attempt, error: (error as Error).message, decision: decision.kind }, 'call failed');
        if (decision.kind !== 'retry') return { ok: false, error, decision, attempts: attempt };
      } finally {
        release();
      }
      // A 429 already paused the whole budget for Retry-After; the call itself waits the same.
      await sleep(decision.delayMs, undefined, { signal: hooks.stopSignal }).catch(() => undefined);
    }
  }
}
