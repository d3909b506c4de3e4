import { redisQuarantine, redisRetry } from './table-hash.js';
import type { Coordination } from '../types.js';
import { RedisBusy } from './busy.js';
import { redisStaging } from './staging.js';
import { redisFirstSeen } from './first-seen.js';
import { parseRedisUrl, RedisLink } from './link.js';
import { takeRedisLock } from './lock.js';
import { RedisWindow } from './window.js';

/** Lock, rate window, busy register and first-seen times in the Redis at `url`, shared with every process that names it. */
export async function redisCoordination(url: string): Promise<Coordination> {
  const link = await RedisLink.connect(parseRedisUrl(url));
  return {
    address: link.address.describe,
    lost: link.lost,
    lock: (scope, options) => takeRedisLock(link, scope, options),
    sharedWindow: (company, limit, periodMs, lane = 'general') => new RedisWindow(link, company, limit, periodMs, lane),
    busy: (company, runId) => new RedisBusy(link, company, runId),
    firstSeen: (company) => redisFirstSeen(link, company),
    staging: (company) => redisStaging(link, company),
    quarantine: (company) => redisQuarantine(link, company),
    retries: (company) => redisRetry(link, company),
    close: () => link.close(),
  };
}
