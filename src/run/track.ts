import { setTimeout as sleep } from 'node:timers/promises';
import type { Caller } from './caller.js';

export interface TrackOptions {
  /** First wait between polls; it grows by half each time up to `maxIntervalMs`. */
  intervalMs: number;
  maxIntervalMs: number;
  /** Give up (the step ends `unknown`) after this long. */
  timeoutMs: number;
  /** A 404 this soon after acceptance means "not visible yet" (the real service lags a few seconds). */
  notFoundGraceMs: number;
  stopSignal?: AbortSignal;
}

export const DEFAULT_TRACKING: TrackOptions = { intervalMs: 1000, maxIntervalMs: 15_000, timeoutMs: 30 * 60_000, notFoundGraceMs: 30_000 };

export type Tracked =
  | { state: 'succeeded'; message?: string; polls: number }
  | { state: 'failed'; message: string; polls: number }
  /** Gave up: timed out, or the id stayed unknown to the service. */
  | { state: 'unknown'; message: string; polls: number; timedOut?: boolean }
  /** Stopped watching (interrupted, or the status could not be read); the operation may still run. */
  | { state: 'untracked'; message: string; polls: number; auth?: boolean };

/**
 * Polls `GET /operations/{id}` until the operation ends. A single 500 is read once more before it
 * counts as the operation's failure: a passing server error looks the same as a failed operation.
 */
export async function trackOperation(caller: Caller, operationId: string, options: TrackOptions, acceptedAt = performance.now()): Promise<Tracked> {
  let interval = options.intervalMs;
  let polls = 0;
  let failedOnce: string | undefined;
  for (;;) {
    if (options.stopSignal?.aborted) return { state: 'untracked', message: 'stopped watching the operation: run interrupted', polls };
    const outcome = await caller.poll(operationId, { stopSignal: options.stopSignal });
    polls += outcome.attempts;
    const elapsed = performance.now() - acceptedAt;
    if (!outcome.ok) {
      const auth = outcome.decision?.kind === 'stop';
      return { state: 'untracked', message: `could not read the operation status: ${outcome.decision?.reason ?? String(outcome.error)}`, polls, auth };
    }
    const status = outcome.value!;
    if (status.state === 'succeeded') return { state: 'succeeded', message: status.message, polls };
    if (status.state === 'failed') {
      if (failedOnce !== undefined) return { state: 'failed', message: status.message ?? failedOnce, polls };
      failedOnce = status.message ?? 'operation failed';
      await sleep(Math.min(interval, 1000), undefined, { signal: options.stopSignal }).catch(() => undefined);
      continue;
    }
    failedOnce = undefined;
    if (status.state === 'not_found' && elapsed > options.notFoundGraceMs) {
      return { state: 'unknown', message: `the service does not know operation ${operationId} (404 for ${Math.round(elapsed / 1000)}s)`, polls };
    }
    if (elapsed >= options.timeoutMs) {
      return { state: 'unknown', message: `operation still in progress after ${Math.round(elapsed / 1000)}s (timeout); check it with \`sitefleet status\``, polls, timedOut: true };
    }
    await sleep(Math.min(interval, Math.max(1, options.timeoutMs - elapsed)), undefined, { signal: options.stopSignal }).catch(() => undefined);
    interval = Math.min(options.maxIntervalMs, Math.round(interval * 1.5));
  }
}
