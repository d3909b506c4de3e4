import { setTimeout as sleep } from 'node:timers/promises';
import type { Logger } from 'pino';
import type { CallResult, HostingClient } from '../api/client.js';
import type { EndpointName } from '../api/endpoints.js';
import { AbortedError, RateLimitError } from '../errors.js';
import type { RateBudget } from './rate-budget.js';
import { decide, DEFAULT_RETRY, type Decision, type RetryPolicy } from './retry.js';

export interface CallOutcome {
  ok: boolean;
  result?: CallResult;
  error?: unknown;
  decision?: Decision;
  attempts: number;
}

export interface CallHooks {
  /** Called right before each attempt is sent (the journal records intent here). */
  beforeAttempt?(attempt: number): void | Promise<void>;
  /** Aborts a call in flight (its outcome is then unknown). */
  signal?: AbortSignal;
  /** Stops starting new attempts (and waiting for a slot); a call in flight ends normally. */
  stopSignal?: AbortSignal;
}

/**
 * Every call of a run goes through here: it takes a slot of the shared rate budget, sends, gives the
 * slot back, and retries by error class. Reads use it as well as writes, so the inventory counts
 * against the same budget.
 */
export class Caller {
  constructor(
    readonly client: HostingClient,
    readonly budget: RateBudget | undefined,
    readonly logger: Logger,
    readonly retry: RetryPolicy = DEFAULT_RETRY,
  ) {}

  async call(endpoint: EndpointName, params: Record<string, string>, body: unknown, idempotent: boolean, hooks: CallHooks = {}): Promise<CallOutcome> {
    for (let attempt = 1; ; attempt++) {
      if (hooks.signal?.aborted || hooks.stopSignal?.aborted) return { ok: false, error: new AbortedError('run interrupted'), decision: { kind: 'failed', reason: 'not sent: run interrupted' }, attempts: attempt - 1 };
      try {
        await this.budget?.acquire(hooks.stopSignal ?? hooks.signal);
      } catch {
        return { ok: false, error: new AbortedError('run interrupted'), decision: { kind: 'failed', reason: 'not sent: run interrupted' }, attempts: attempt - 1 };
      }
      let released = false;
      const release = (outcome?: { rateLimited: boolean; retryAfterMs?: number }) => {
        if (!released) this.budget?.release(outcome);
        released = true;
      };
      try {
        await hooks.beforeAttempt?.(attempt);
        const result = await this.client.call(endpoint, params, body, hooks.signal);
        release();
        return { ok: true, result, attempts: attempt };
      } catch (error) {
        const limited = error instanceof RateLimitError;
        release({ rateLimited: limited, retryAfterMs: limited ? error.retryAfterMs : undefined });
        const decision = decide(error, attempt, idempotent, this.retry);
        this.logger.debug({ endpoint, attempt, error: (error as Error).message, decision: decision.kind }, 'call failed');
        if (decision.kind !== 'retry') return { ok: false, error, decision, attempts: attempt };
        // A 429 already paused the whole budget for Retry-After; the call itself waits the same.
        await sleep(decision.delayMs, undefined, { signal: hooks.stopSignal ?? hooks.signal }).catch(() => undefined);
      } finally {
        release();
      }
    }
  }

  /** A read that must succeed (inventory): retried like any safe call; its final error is thrown. */
  async read<T>(endpoint: EndpointName, params: Record<string, string>, body?: unknown, signal?: AbortSignal): Promise<T> {
    const outcome = await this.call(endpoint, params, body, true, { signal });
    if (!outcome.ok) throw outcome.error;
    return outcome.result!.data as T;
  }
}
