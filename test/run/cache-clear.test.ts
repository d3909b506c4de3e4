import { describe, expect, it } from 'vitest';
import { AuthenticationError, HttpError, NotFoundError, ServerError } from '../../src/errors.js';
import { decide, DEFAULT_RETRY } from '../../src/run/retry.js';
import { clearCache, type ClearContext } from '../../src/run/cache-clear.js';
import type { CallOutcome, CallPort } from '../../src/run/caller.js';
import type { Watcher } from '../../src/run/watcher.js';

/** A clear whose one call ends as `outcome` says; no operation is ever watched. */
function contextAnswering(outcome: CallOutcome): ClearContext {
  const caller = {
    withPlace: (_priority: unknown, _endpoint: unknown, work: (place: never) => Promise<unknown>) => work(undefined as never),
    call: async () => outcome,
  } as unknown as CallPort;
  return { caller, watcher: {} as Watcher, stopSignal: new AbortController().signal, watch: {} as ClearContext['watch'] };
}

const PATH = '/v2/sites/tools/clear-cache';
const refusedWith = (error: Error): CallOutcome => ({ ok: false, error, decision: decide(error, 1, true, DEFAULT_RETRY), attempts: 1 });
const answered = (data: unknown): CallOutcome => ({ ok: true, value: { status: 200, data }, attempts: 1 });

describe('a page cache clear refused as missing is not available (the look goes on); any other refusal is not cleared (it holds)', () => {
  it.each([
    ['404 Not Found', refusedWith(new NotFoundError(404, 'POST', PATH, 'Not Found')), 'not available', false],
    ['405 Method Not Allowed', refusedWith(new HttpError(405, 'POST', PATH, 'Method Not Allowed')), 'not available', false],
    ['an answer whose body says 404', answered({ status: 404, message: 'No cache on this environment' }), 'not available', false],
    ['400 Bad Request', refusedWith(new HttpError(400, 'POST', PATH, 'bad environment_id')), 'not cleared', false],
    ['500 after its retries', refusedWith(new ServerError(500, 'POST', PATH, 'Internal server error')), 'not cleared', false],
    ['an answer whose body says 500', answered({ status: 500, message: 'Cache could not be cleared' }), 'not cleared', false],
    ['401: the key is bad for every call after it', refusedWith(new AuthenticationError(401, 'POST', PATH, 'Unauthorized')), 'not cleared', true],
  ] as const)('%s → %s', async (_what, outcome, expected, stops) => {
    const { clear, stop } = await clearCache(contextAnswering(outcome), 'env-1');
    expect(clear.outcome).toBe(expected);
    expect(clear.detail).toBeTruthy();
    expect(stop !== undefined).toBe(stops);
  });
});
