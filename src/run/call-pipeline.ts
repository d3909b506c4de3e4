import { setTimeout as sleep } from 'node:timers/promises';
import type { Logger } from 'pino';
import type { EndpointName } from '../api/endpoints.js';
import type { SlotOutcome, WindowLane } from '../coord/types.js';
import { AbortedError, CoordinationError, RateLimitedTooLongError, RateLimitError } from '../errors.js';
import type { Priority } from './rate-budget.js';
import { decide, type Decision, type RetryPolicy } from './retry.js';

/**
 * The layers every call goes through, each a small function of the next one. `Caller` composes them
 * in one line, outermost first: retries, then a place among the calls in flight, then this process's
 * rate budgets, then the company's shared windows, then the send. Every call takes them in that one
 * order, so none ever waits for one while holding another that the call it waits on needs (a poll
 * holding a budget slot while waiting for a place, with every place held by a write waiting for the
 * budget, would stop the run for good).
 */

export type CallTarget = EndpointName | 'getOperation';

/** One attempt as the layers pass it down. */
export interface AttemptRequest {
  attempt: number;
  endpoint: CallTarget;
  priority: Priority;
  /** Stops starting new attempts and waiting for places and slots; a call in flight ends normally. */
  signal?: AbortSignal;
}

/**
 * How one attempt ended: never sent (the run stopped, or the coordination was lost: `cause`),
 * answered, or failed; a failure says what the limits it held should count (it may not have left).
 */
export type Attempt<T> = { sent: false; cause?: unknown } | { sent: true; ok: true; value: T } | { sent: true; ok: false; error: unknown; slot: SlotOutcome };

export type Send<T> = (request: AttemptRequest) => Promise<Attempt<T>>;

/** What each limit is told when its slot is given back. */
function slotOutcome(attempt: Attempt<unknown>): SlotOutcome {
  return !attempt.sent ? { notSent: true } : attempt.ok ? {} : attempt.slot;
}

/** The innermost layer: says the attempt is about to go (the journal records intent), then sends. Never throws. */
export function sending<T>(send: () => Promise<T>, beforeAttempt?: (attempt: number) => void | Promise<void>): Send<T> {
  return async ({ attempt }) => {
    let left = false;
    try {
      await beforeAttempt?.(attempt);
      left = true;
      return { sent: true, ok: true, value: await send() };
    } catch (error) {
      // Refused at the last moment (the window closed): nothing left, nothing was journaled, as a stop.
      if (!left && error instanceof AbortedError) return { sent: false, cause: error };
      const limited = error instanceof RateLimitError;
      const slot: SlotOutcome = left ? { rateLimited: limited, retryAfterMs: limited ? error.retryAfterMs : undefined } : { notSent: true };
      return { sent: true, ok: false, error, slot };
    }
  };
}

/** A limit a call takes a slot of before it goes, and gives back with what the server did. */
export interface Limit {
  lane: WindowLane;
  take(signal: AbortSignal | undefined, priority: Priority): Promise<void>;
  give(outcome: SlotOutcome): void;
}

/**
 * Which limit refused a 429, so that only that one learns: the others count nothing (the server did
 * not). Given the endpoint and what the attempt did; undefined when it was no refusal. `environment`:
 * a rule of the service per environment (one cache clear every 10 s) that none of the run's limits
 * keeps, so none of them learns: the call alone waits out its Retry-After.
 */
export type RefusedBy = (endpoint: CallTarget, slot: SlotOutcome) => WindowLane | 'environment' | undefined;

/**
 * Takes a slot of each of `limitsFor(endpoint)`, in order, before `next`, and gives each back with
 * the attempt's outcome (a limit that did not refuse a 429 is told the call was not sent). A stop
 * while waiting gives back what was taken and sends nothing.
 */
export function throttled<T>(limitsFor: (endpoint: CallTarget) => Limit[], refusedBy: RefusedBy, next: Send<T>): Send<T> {
  return async (request) => {
    const taken: Limit[] = [];
    const giveBack = (slot: SlotOutcome) => {
      const lane = refusedBy(request.endpoint, slot);
      for (const limit of taken) limit.give(lane && limit.lane !== lane ? { notSent: true } : slot);
    };
    try {
      for (const limit of limitsFor(request.endpoint)) {
        if (request.signal?.aborted) throw request.signal.reason;
        await limit.take(request.signal, request.priority);
        taken.push(limit);
      }
    } catch (cause) {
      giveBack({ notSent: true });
      return { sent: false, cause };
    }
    const attempt = await next(request);
    giveBack(slotOutcome(attempt));
    return attempt;
  };
}

/** A place among the calls in flight for the length of `work` (see `Caller.withPlace`). */
export type TakePlace = <R>(priority: Priority, endpoint: CallTarget, work: () => Promise<R>) => Promise<R>;

/** One place among the calls in flight per attempt: a call waiting out a backoff holds none. */
export function inPlace<T>(takePlace: TakePlace, next: Send<T>): Send<T> {
  return (request) =>
    takePlace(request.priority, request.endpoint, () =>
      // The run may have stopped (a 401, Ctrl-C) while this call waited for its place.
      request.signal?.aborted ? Promise.resolve({ sent: false } as Attempt<T>) : next(request),
    );
}

export interface Outcome<T> {
  ok: boolean;
  value?: T;
  error?: unknown;
  decision?: Decision;
  attempts: number;
  /**
   * The run stopped before the call had an answer that counts: it was never sent, or it was waiting
   * to retry after attempts that were refused (429), never reached the server, or are safe to repeat.
   * Either way the service accepted nothing, and `resume` must send it.
   */
  interrupted?: boolean;
}

export interface RetryOptions {
  policy: RetryPolicy;
  logger: Logger;
  endpoint: CallTarget;
  idempotent: boolean;
  priority: Priority;
  signal?: AbortSignal;
  /** The clock 429s are timed with. @default performance.now */
  now?: () => number;
}

/** Attempts until one counts, deciding by the error's class (retry.ts); 429s are timed against the policy's wait. */
export async function retrying<T>(options: RetryOptions, next: Send<T>): Promise<Outcome<T>> {
  const { policy, logger, endpoint, idempotent, signal } = options;
  const now = options.now ?? (() => performance.now());
  let lastRefusal = '';
  // A coordination lost while waiting (Redis gone) is said as such: reads fail with it (exit 3).
  const notSent = (attempts: number, cause?: unknown): Outcome<T> => ({
    ok: false,
    error: cause instanceof CoordinationError ? cause : new AbortedError('run interrupted'),
    decision: {
      kind: 'failed',
      reason: attempts === 0 ? 'not sent: run stopped' : `not accepted: the run stopped while the call waited to be retried (${lastRefusal})`,
    },
    attempts,
    interrupted: true,
  });
  let limitedSince: number | undefined;
  for (let attempt = 1; ; attempt++) {
    const result = await next({ attempt, endpoint, priority: options.priority, signal });
    if (!result.sent) return notSent(attempt - 1, result.cause);
    if (result.ok) return { ok: true, value: result.value, attempts: attempt };
    const limited = result.error instanceof RateLimitError;
    if (limited) limitedSince ??= now();
    const limitedFor = limitedSince === undefined ? 0 : now() - limitedSince;
    const decision = decide(result.error, attempt, idempotent, policy, limitedFor);
    logger.debug({ call: endpoint, attempt, error: (result.error as Error).message, decision: decision.kind }, 'call failed');
    if (decision.kind !== 'retry') {
      // Refused for longer than the run may wait: said as such (who else uses the key, what to do).
      const refused = result.error as RateLimitError;
      const error = limited ? new RateLimitedTooLongError(limitedFor, `${refused.method} ${refused.path}`, { cause: refused }) : result.error;
      return { ok: false, error, decision, attempts: attempt };
    }
    lastRefusal = decision.reason;
    // A 429 already paused the whole budget for Retry-After; the call itself waits the same.
    await sleep(decision.delayMs, undefined, { signal }).catch(() => undefined);
  }
}
