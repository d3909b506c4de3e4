import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { quarantineFile, retryFile } from '../../src/coord/quarantine-file.js';
import { redisQuarantine, redisRetry } from '../../src/coord/redis/table-hash.js';
import type { QuarantineStore, RetryStore } from '../../src/coord/types.js';
import { releaseOf, type QuarantineBreak } from '../../src/inventory/quarantine-table.js';
import type { RetryFailure } from '../../src/inventory/retry-table.js';
import { tempDir } from '../helpers/cli.js';
import { useRedis, useRedisLinks } from '../helpers/redis.js';

const COMPANY = '0f1e2d3c-4b5a-4697-8877-665544332211';
const T0 = Date.parse('2026-03-02T02:00:00.000Z');
const DAY = 86_400_000;
const A = 'aaaaaaaa-2222-4333-8444-555555555555';
const B = 'bbbbbbbb-2222-4333-8444-555555555555';
const broke = (env: string, at: number, version = '2.0.0'): QuarantineBreak => ({
  plugin: 'forms',
  version,
  env_id: env,
  site: 'shop',
  at,
  why: 'PHP Fatal error in forms',
});
const failed = (run: string, at: number, env = A): RetryFailure => ({ plugin: 'forms', version: '2.0.0', env_id: env, run, at, why: 'HTTP 503' });
const linesOf = (path: string) => readFileSync(path, 'utf8').split('\n').filter(Boolean);

const redis = useRedis();
const linkTo = useRedisLinks();

/** The same story told to each store: what it records, what a release takes away, and how much it keeps. */
async function quarantineStory(store: QuarantineStore, size: () => Promise<number>) {
  await store.record([broke(A, T0), broke(B, T0 + DAY)]);
  // An end recorded again (each `status`): nothing added.
  const again = await store.record([broke(A, T0 + 2 * DAY), broke(B, T0 + DAY)]);
  expect(again.get('plugin', 'forms', '2.0.0')).toMatchObject({ first: { env_id: A, at: T0, site: 'shop' }, env_ids: [A, B] });
  expect(await size()).toBe(2);
  await store.record([broke(A, T0, '3.0.0')]);
  const released = await store.record([releaseOf('plugin', 'forms', '2.0.0', T0 + 3 * DAY)]);
  expect(released.has('plugin', 'forms', '2.0.0')).toBe(false);
  expect(released.has('plugin', 'forms', '3.0.0')).toBe(true);
  // A release of what is not held adds nothing.
  await store.record([releaseOf('plugin', 'forms', '9.9.9', T0 + 3 * DAY)]);
  expect((await store.record([])).list().map((q) => q.version)).toEqual(['3.0.0']);
}

async function retryStory(store: RetryStore, size: () => Promise<number>) {
  await store.record([failed('r1', T0), failed('r1', T0 + 1000), failed('r2', T0 + DAY), failed('r1', T0, B)]);
  const table = await store.record([]);
  expect(table.state(A, 'plugin', 'forms', '2.0.0', [DAY, 2 * DAY])?.retry_at).toBe(T0 + 3 * DAY);
  expect(await size()).toBe(3);
  const cleared = await store.record([{ plugin: 'forms', cleared: true, at: T0 + 2 * DAY, env_id: A }]);
  expect(cleared.failed(A, 'plugin', 'forms')).toBe(false);
  expect(cleared.failed(B, 'plugin', 'forms')).toBe(true);
  // A success with nothing to clear adds nothing.
  await store.record([{ plugin: 'forms', cleared: true, at: T0 + 3 * DAY, env_id: A }]);
}

describe('quarantine and retry, in the state folder', () => {
  it('appends what changes the table, and a compaction drops what a release folded away, the release with it', async () => {
    const store = quarantineFile(tempDir(), COMPANY, { compactAbove: 3 });
    await quarantineStory(store, () => Promise.resolve(linesOf(store.where).length));
    // Compacted: the one standing break alone.
    expect(linesOf(store.where).map((l) => JSON.parse(l) as Record<string, unknown>)).toEqual([
      { v: 1, plugin: 'forms', version: '3.0.0', env_id: A, site: 'shop', at: new Date(T0).toISOString(), why: 'PHP Fatal error in forms' },
    ]);
  });

  it('retries: one failure a run, a success clears, a compaction keeps only what stands', async () => {
    const store = retryFile(tempDir(), COMPANY, { compactAbove: 2 });
    await retryStory(store, () => Promise.resolve(linesOf(store.where).length));
    expect(linesOf(store.where).map((l) => (JSON.parse(l) as { env_id: string }).env_id)).toEqual([B]);
  });

  it('skips a line that is not an entry, and keeps one of a later format through a compaction', async () => {
    const dir = tempDir();
    const store = quarantineFile(dir, COMPANY, { compactAbove: 1 });
    await store.record([broke(A, T0)]);
    const { appendFileSync } = await import('node:fs');
    appendFileSync(store.where, 'not json\n{"v":2,"plugin":"forms"}\n{"v":1,"plugin":"forms"}\n');
    const table = await store.record([releaseOf('plugin', 'forms', '2.0.0', T0 + DAY)]);
    expect(table.list()).toEqual([]);
    expect(linesOf(store.where)).toEqual(['{"v":2,"plugin":"forms"}']);
  });
});

describe('quarantine and retry, in Redis', () => {
  it('one field per entry; a release takes the entries it folds away out of the hash, and itself', async () => {
    const link = await linkTo((await redis()).url);
    const store = redisQuarantine(link, COMPANY);
    await quarantineStory(store, () => link.redis.hlen(store.where));
    expect(await link.redis.hlen(store.where)).toBe(1);
    // Another machine naming the company in capitals reads the same table.
    expect((await redisQuarantine(link, COMPANY.toUpperCase()).record([])).has('plugin', 'forms', '3.0.0')).toBe(true);
  });

  it('retries: one failure a run, a success clears and leaves the hash', async () => {
    const link = await linkTo((await redis()).url);
    const store = redisRetry(link, COMPANY);
    await retryStory(store, () => link.redis.hlen(store.where));
    expect(await link.redis.hlen(store.where)).toBe(1);
  });
});
