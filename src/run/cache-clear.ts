import { reasonText, writeAnswer } from '../api/answer.js';
import { HttpError } from '../errors.js';
import type { CallPort } from './caller.js';
import { PRIORITY } from './rate-budget.js';
import type { CacheClear, StopKind } from './types.js';
import type { Watcher, WatchOptions } from './watcher.js';

/** What clearing a page cache needs from the run. */
export interface ClearContext {
  caller: CallPort;
  watcher: Watcher;
  /** The run stopping: a clear not yet sent is not sent, and one being waited for is not waited for. */
  stopSignal: AbortSignal;
  watch: WatchOptions;
}

/** A clear's record, and the stop a refusal calls for (a 401: the key is bad for every call after it). */
export interface ClearOutcome {
  clear: CacheClear;
  stop?: { reason: string; kind: StopKind };
}

/**
 * A clear refused as missing (404 Not Found, 405 Method Not Allowed): the service, or this account or
 * environment, has no such tool. The look goes on without it (`not available`, said once per run),
 * rather than hold every step of a fleet whose host offers nothing to clear. A clear that was taken and then failed still holds (`not cleared`).
 */
const MISSING: ReadonlySet<number> = new Set([404, 405]);

/**
 * Clears an environment's page cache through the service (`POST /sites/tools/clear-cache`, an API
 * call through the rate budget like any other) and follows its operation to its end, so that the
 * look after a write sees the page visitors will get. A clear asks for nothing but an empty cache,
 * so it is safe to send again (idempotent): a 429 of the vendor's "one every 10 s" is waited out as
 * its Retry-After says. Anything short of an operation seen to succeed is `not cleared`, with why,
 * but a refusal as missing (MISSING: `not available`).
 */
export async function clearCache(ctx: ClearContext, envId: string): Promise<ClearOutcome> {
  // Something waits for it (the check after the write, with the environment held): before writes.
  const outcome = await ctx.caller.withPlace(PRIORITY.urgent, 'clearCache', (place) =>
    ctx.caller.call('clearCache', {}, { environment_id: envId }, true, { place, priority: PRIORITY.urgent, stopSignal: ctx.stopSignal }),
  );
  if (!outcome.ok) {
    const reason = outcome.decision?.reason ?? String(outcome.error);
    if (outcome.error instanceof HttpError && MISSING.has(outcome.error.status))
      return { clear: { outcome: 'not available', detail: `the service has no such clear here: ${reason}` } };
    const stop = outcome.decision?.kind === 'stop' ? { reason, kind: outcome.decision.stop } : undefined;
    return { clear: { outcome: 'not cleared', detail: `the clear was not taken: ${reason}` }, ...(stop ? { stop } : {}) };
  }
  const answer = writeAnswer(outcome.value!.data);
  if (answer.kind === 'refused') {
    const detail = `the service answered status ${answer.status}${answer.reason ? `: ${reasonText(answer.reason)}` : ''}`;
    return { clear: { outcome: MISSING.has(answer.status) ? 'not available' : 'not cleared', detail } };
  }
  if (answer.kind === 'done') return { clear: { outcome: 'cleared' } };
  const operation_id = answer.operationId;
  const watch = ctx.watcher.watch(operation_id, 'cache:clear', ctx.watch);
  watch.expedite();
  const tracked = await watch.done;
  if (tracked.state === 'succeeded') return { clear: { outcome: 'cleared', operation_id } };
  const detail = tracked.state === 'failed' ? `its operation failed: ${reasonText(tracked)}` : `its operation was not seen to end: ${tracked.message}`;
  return {
    clear: { outcome: 'not cleared', operation_id, detail },
    ...(tracked.state === 'untracked' && tracked.stop ? { stop: { reason: tracked.message, kind: tracked.stop } } : {}),
  };
}
