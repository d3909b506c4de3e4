import type { Logger } from 'pino';
import type { Subscriber } from './subscriber.js';

/**
 * One warning line for the run, at the first page cache clear the service refused as missing (404,
 * 405: `not available`, run/cache-clear.ts), however many environments answer so after it: each look
 * goes on without a clear, and its record says so; the summary counts them.
 */
export function cacheMissingWarning(logger: Logger): Subscriber {
  let said = false;
  return {
    onEvent(event) {
      if (said || (event.type !== 'result' && event.type !== 'update')) return;
      const cache = event.result.health?.cache ?? event.result.restored?.health?.cache;
      if (cache?.outcome !== 'not available') return;
      said = true;
      logger.warn(
        { detail: cache.detail },
        'the service has no page cache clear here: the looks after the writes go on without one (said once; health.clear_cache: false stops asking)',
      );
    },
  };
}
