import { describe, expect, it } from 'vitest';
import { redisFirstSeen } from '../../src/coord/redis/first-seen.js';
import { companyKey } from '../../src/coord/redis/lock.js';
import { CoordinationError } from '../../src/errors.js';
import { useRedis, useRedisLinks } from '../helpers/redis.js';

// Two links are two machines: each its own connection to a real redis-server.
const redis = useRedis();
const connect = useRedisLinks();
const COMPANY = '0f1e2d3c-4b5a-4697-8899-aabbccddeeff';
const T0 = Date.parse('2026-03-02T02:00:00.000Z');
const DAY = 86_400_000;

async function twoMachines() {
  const r = await redis();
  const [a, b] = await Promise.all([connect(r.url), connect(r.url)]);
  return { r, a, b };
}

describe('first-seen times in Redis', () => {
  it('are shared between machines, keep the earlier of two times, and are kept per company (either case of its UUID)', async () => {
    const { a, b } = await twoMachines();
    const first = await redisFirstSeen(a, COMPANY).record([{ theme: 'astra', version: '1.1' }], T0);
    expect(first.at('theme', 'astra', '1.1')).toBe(T0);
    // Machine B sees it a day later, with a version of its own: A's time stays.
    const later = await redisFirstSeen(b, COMPANY.toUpperCase()).record(
      [
        { theme: 'astra', version: '1.1' },
        { theme: 'neve', version: '2.0' },
      ],
      T0 + DAY,
    );
    expect([later.at('theme', 'astra', '1.1'), later.at('theme', 'neve', '2.0')]).toEqual([T0, T0 + DAY]);
    // A machine whose clock is behind moves a time earlier, never later.
    expect((await redisFirstSeen(a, COMPANY).record([{ theme: 'neve', version: '2.0' }], T0)).at('theme', 'neve', '2.0')).toBe(T0);
    const other = await redisFirstSeen(a, '11111111-2222-4333-8444-555555555555').record([], T0);
    expect(other.at('theme', 'astra', '1.1')).toBeUndefined();
    // A field this store did not write is skipped, not trusted.
    await a.redis.hset(companyKey(COMPANY, 'first-seen'), 'not json', '1');
    expect([...(await redisFirstSeen(a, COMPANY).record([], T0)).entries()]).toHaveLength(2);
  });

  it('6.0 and 6.0.0 are one version: a field an earlier release wrote as 6.0 keeps its time, and new fields are written by the key', async () => {
    const { a } = await twoMachines();
    const key = companyKey(COMPANY, 'first-seen');
    await a.redis.hset(key, JSON.stringify(['astra', '6.0']), String(T0));
    const table = await redisFirstSeen(a, COMPANY).record(
      [
        { theme: 'astra', version: '6.0.0' },
        { theme: 'astra', version: '6.1' },
        { theme: 'astra', version: '6.1.0' },
      ],
      T0 + DAY,
    );
    expect([table.at('theme', 'astra', '6.0'), table.at('theme', 'astra', '6.0.0'), table.at('theme', 'astra', '6.1')]).toEqual([T0, T0, T0 + DAY]);
    expect((await a.redis.hkeys(key)).sort()).toEqual([
      JSON.stringify(['astra', '6.0']),
      JSON.stringify(['astra', '6.0.0']),
      JSON.stringify(['astra', '6.1.0']),
    ]);
  });

  it('a Redis gone stops the command with a CoordinationError', async () => {
    const { r, a } = await twoMachines();
    await r.stop();
    await expect(redisFirstSeen(a, COMPANY).record([{ theme: 'astra', version: '1.1' }], T0)).rejects.toThrow(CoordinationError);
  });
});
