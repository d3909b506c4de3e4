import { STAGING_LINES } from '../../src/coord/staging-file.js';
import { describe, expect, it } from 'vitest';
import { Script } from '../../src/coord/redis/link.js';
import { companyKey } from '../../src/coord/redis/lock.js';
import { STAGING_MIGRATE } from '../../src/coord/redis/scripts.js';
import { redisStaging } from '../../src/coord/redis/staging.js';
import type { StagingEntry } from '../../src/inventory/staging-table.js';
import { useRedis, useRedisLinks } from '../helpers/redis.js';

const redis = useRedis();
const linkTo = useRedisLinks();
const COMPANY = '0f1e2d3c-4b5a-4697-8899-aabbccddeeff';
const T0 = Date.parse('2026-03-02T02:00:00.000Z');
const HOUR = 3_600_000;
const ENV = '11111111-2222-4333-8444-555555555555';
const healthy = (at: number, version = '1.0.1'): StagingEntry => ({ env_id: ENV, theme: 'calm', version, kind: 'healthy', at });
const failed = (at: number, why: string): StagingEntry => ({ env_id: ENV, theme: 'calm', version: '1.0.1', kind: 'failed', at, why });
/** A line as the release before pushed it to its list. */
const oldLine = (e: StagingEntry) => JSON.stringify(STAGING_LINES.toRecord(e));

async function connect() {
  return linkTo((await redis()).url);
}

describe('what staging ran, in Redis', () => {
  it('keeps one field per end, the earliest time standing, however often an end is recorded', async () => {
    const link = await connect();
    const store = redisStaging(link, COMPANY);
    for (const at of [T0, T0 + HOUR, T0 + 2 * HOUR]) await store.record([healthy(at)]);
    const table = await redisStaging(link, COMPANY.toUpperCase()).record([healthy(T0 - HOUR), failed(T0 + HOUR, 'broke'), failed(T0 + 2 * HOUR, 'later')]);
    expect(table.get(ENV, { kind: 'theme', name: 'calm' }, '1.0.1')).toEqual({ healthy: T0 - HOUR, failed: { at: T0 + HOUR, why: 'broke' } });
    expect(await link.redis.hlen(store.where)).toBe(2);
    // A field or value this store did not write is skipped, not trusted.
    await link.redis.hset(store.where, 'not json', '1', JSON.stringify([ENV, 'calm', '1.0.2', 'healthy']), '{"v":2,"at":1}');
    expect((await store.record([])).get(ENV, { kind: 'theme', name: 'calm' }, '1.0.2')).toBeUndefined();
  });

  it('moves the list an earlier release appended to into the hash, and reads it so: nothing lost, the list gone', async () => {
    const link = await connect();
    const list = companyKey(COMPANY, 'staging');
    // 1,200 lines: the ends of a few nights, pushed again by every status.
    const lines = Array.from({ length: 1200 }, (_, i) => oldLine(i % 3 === 2 ? failed(T0 + i * HOUR, `night ${i}`) : healthy(T0 + i * HOUR, `1.0.${i % 3}`)));
    lines.splice(7, 0, 'not a line');
    await link.redis.rpush(list, ...lines);
    const table = await redisStaging(link, COMPANY).record([healthy(T0 + HOUR, '1.0.0')]);
    expect(await link.redis.exists(list)).toBe(0);
    expect(table.get(ENV, { kind: 'theme', name: 'calm' }, '1.0.0')).toEqual({ healthy: T0 });
    expect(table.get(ENV, { kind: 'theme', name: 'calm' }, '1.0.1')).toEqual({ healthy: T0 + HOUR, failed: { at: T0 + 2 * HOUR, why: 'night 2' } });
    expect(await link.redis.hlen(companyKey(COMPANY, 'staging', 'table'))).toBe(3);
  });

  it('a migration step moves lines only if the list still starts with those it read', async () => {
    const link = await connect();
    const keys = [companyKey(COMPANY, 'staging', 'table'), companyKey(COMPANY, 'staging')];
    await link.redis.rpush(keys[1]!, oldLine(healthy(T0)), oldLine(healthy(T0 + HOUR)));
    const migrate = new Script(STAGING_MIGRATE);
    // Read by a process that another moved the list under: refused, nothing changed.
    expect(await link.run(migrate, keys, [1, oldLine(healthy(T0 + HOUR))])).toBe(0);
    expect(await link.redis.llen(keys[1]!)).toBe(2);
    expect(await link.run(migrate, keys, [1, oldLine(healthy(T0))])).toBe(1);
    expect(await link.redis.lrange(keys[1]!, 0, -1)).toEqual([oldLine(healthy(T0 + HOUR))]);
  });
});
