import {
  AbortedError,
  AuthenticationError,
  HttpError,
  MalformedResponseError,
  NetworkError,
  RateLimitedTooLongError,
  RateLimitError,
  RequestValidationError,
  ServerError,
} from '../errors.js';
import type { StopKind } from './types.js';

export interface RetryPolicy {
  /** Attempts for a call that failed in a way worth repeating (5xx, network), 429s aside. */
  maxAttempts: number;
  /**
   * How long a call keeps trying while the server answers 429. By time, not by count: the key's
   * budget is shared with other programs, and one of them may hold it for minutes.
   */
  rateLimitWaitMs: number;
  baseDelayMs: number;
  maxDelayMs: number;
}

export const DEFAULT_RETRY: RetryPolicy = { maxAttempts: 5, rateLimitWaitMs: 10 * 60_000, baseDelayMs: 500, maxDelayMs: 30_000 };

/**
 * What to do after a failed attempt:
 * - `retry`: send again after `delayMs`;
 * - `failed`: the call certainly did not do its work (4xx, validation);
 * - `unknown`: it may or may not have happened, and sending again could do it twice;
 * - `stop`: the whole run must stop (the key is bad).
 */
export type Decision =
  | { kind: 'retry'; delayMs: number; reason: string }
  | { kind: 'failed'; reason: string }
  | { kind: 'unknown'; reason: string }
  | { kind: 'stop'; reason: string; stop: Extract<StopKind, 'auth' | 'rate_limited'> };

/** Exponential backoff with full jitter (AWS's "full jitter"): spreads a herd of retries apart. */
export function backoff(attempt: number, policy: RetryPolicy, random = Math.random): number {
  const ceiling = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** (attempt - 1));
  return Math.round(ceiling / 2 + (random() * ceiling) / 2);
}

/**
 * `rateLimitedForMs`: how long this call has been answered 429, since its first refusal.
 */
export function decide(error: unknown, attempt: number, idempotent: boolean, policy: RetryPolicy, rateLimitedForMs = 0): Decision {
  const reason = (error as Error).message;
  if (error instanceof AuthenticationError)
    return { kind: 'stop', stop: 'auth', reason: `authentication failed (401): ${error.serverMessage ?? 'bad API key'}` };
  if (error instanceof RateLimitError) {
    // A 429 was not processed, so even a creating call may be sent again.
    const delayMs = error.retryAfterMs ?? backoff(attempt, policy);
    // Refused that long, the service never took the call, and every other call would fare the same:
    // the run stops, and `resume` sends what was never accepted once the budget is free again.
    if (rateLimitedForMs + delayMs > policy.rateLimitWaitMs) {
      return { kind: 'stop', stop: 'rate_limited', reason: new RateLimitedTooLongError(rateLimitedForMs, `${error.method} ${error.path}`).message };
    }
    return { kind: 'retry', delayMs, reason };
  }
  if (error instanceof RequestValidationError) return { kind: 'failed', reason };
  if (error instanceof ServerError) {
    if (!idempotent) return { kind: 'unknown', reason: `${reason}; a creating call is not re-sent, check it by hand` };
    return attempt < policy.maxAttempts
      ? { kind: 'retry', delayMs: backoff(attempt, policy), reason }
      : { kind: 'failed', reason: `${reason} (after ${attempt} attempts)` };
  }
  if (error instanceof HttpError) return { kind: 'failed', reason };
  if (error instanceof AbortedError) return { kind: 'unknown', reason: 'interrupted while the call was in flight' };
  if (error instanceof MalformedResponseError) {
    return { kind: 'unknown', reason: `${reason}; the call was answered ${error.status} and may have been applied` };
  }
  if (error instanceof NetworkError) {
    const mayRepeat = idempotent || !error.mayHaveReached;
    if (!mayRepeat) return { kind: 'unknown', reason: `${reason}; it may have reached the server, and a creating call is not re-sent` };
    if (attempt < policy.maxAttempts) return { kind: 'retry', delayMs: backoff(attempt, policy), reason };
    return { kind: error.mayHaveReached ? 'unknown' : 'failed', reason: `${reason} (after ${attempt} attempts)` };
  }
  return { kind: 'failed', reason: `unexpected error: ${reason}` };
}
