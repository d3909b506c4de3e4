import { afterEach, describe, expect, it } from 'vitest';
import { parseRedisUrl, RedisLink } from '../../src/coord/redis/link.js';
import { companyKey } from '../../src/coord/redis/lock.js';
import { RedisWindow } from '../../src/coord/redis/window.js';
import { useRedis } from '../helpers/redis.js';

// Two links are two processes: each its own connection to a real redis-server.
const redis = useRedis();
const links: RedisLink[] = [];
afterEach(async () => {
  for (const link of links.splice(0)) await link.close();
});
const COMPANY = '0f1e2d3c-4b5a-4697-8899-aabbccddeeff';

async function twoProcesses(limit: number, periodMs: number) {
  const r = await redis();
  const [a, b] = await Promise.all([RedisLink.connect(parseRedisUrl(r.url)), RedisLink.connect(parseRedisUrl(r.url))]);
  links.push(a, b);
  return { a, b, wa: new RedisWindow(a, COMPANY, limit, periodMs), wb: new RedisWindow(b, COMPANY, limit, periodMs) };
}

/** `n` calls answered in this process's window. */
async function answered(window: RedisWindow, n: number): Promise<void> {
  for (let i = 0; i < n; i++) {
    await window.take();
    window.give({});
  }
}

describe('the shared rate window (real Redis)', () => {
  it('slots are shared: held from sending until one period after the answer, whichever process took them', async () => {
    const { a, wa, wb } = await twoProcesses(10, 1000);
    for (let i = 0; i < 10; i++) await wa.take();
    const waiting = new AbortController();
    setTimeout(() => waiting.abort(new Error('still waiting')), 300);
    await expect(wb.take(waiting.signal)).rejects.toThrow('still waiting'); // all ten in flight in the other process
    for (let i = 0; i < 10; i++) wa.give({});
    await a.redis.ping(); // the answers are in Redis (one connection keeps its order)
    const t0 = Date.now();
    await wb.take();
    expect(Date.now() - t0).toBeGreaterThanOrEqual(900); // a period after the answers, not at once
  });

  it('a 429 seen by one process pauses the other until Retry-After and lowers the limit they share', async () => {
    const { a, b, wa, wb } = await twoProcesses(10, 5000);
    await answered(wa, 4);
    await wa.take();
    wa.give({ rateLimited: true, retryAfterMs: 3000 });
    await a.redis.ping();
    expect(await b.redis.hget(companyKey(COMPANY, 'limits'), 'limit')).toBe('4'); // what the server let through
    const t0 = Date.now();
    await wb.take();
    expect(Date.now() - t0).toBeGreaterThanOrEqual(2900);
    expect(wb.pausedForMs()).toBe(0);
  });

  it('a Retry-After much shorter than the period teaches a shared short-window rule instead', async () => {
    const { a, b, wa } = await twoProcesses(100, 60_000);
    await answered(wa, 5);
    await wa.take();
    wa.give({ rateLimited: true, retryAfterMs: 1000 });
    await a.redis.ping();
    const limits = await b.redis.hgetall(companyKey(COMPANY, 'limits'));
    expect(limits).toMatchObject({ short_window: '1000', short_limit: '5' });
    expect(limits.limit).toBeUndefined(); // the per-minute limit stands
  });
});
