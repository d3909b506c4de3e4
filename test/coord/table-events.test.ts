import { appendFileSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { quarantineFile, retryFile } from '../../src/coord/quarantine-file.js';
import { redisQuarantine, redisRetry } from '../../src/coord/redis/table-hash.js';
import type { QuarantineStore, RetryStore } from '../../src/coord/types.js';
import { releaseOf, type QuarantineBreak } from '../../src/inventory/quarantine-table.js';
import type { RetryFailure } from '../../src/inventory/retry-table.js';
import { installedItem } from '../helpers/items.js';
import { judgeWithheld } from '../../src/inventory/withheld.js';
import { withholdingOf } from '../../src/app/withheld-record.js';
import { tempDir } from '../helpers/cli.js';
import { useRedis, useRedisLinks } from '../helpers/redis.js';

const COMPANY = '0f1e2d3c-4b5a-4697-8877-665544332211';
const T0 = Date.parse('2026-03-02T02:00:00.000Z');
const DAY = 86_400_000;
const ENVS = ['e1', 'e2', 'e3', 'e4', 'e5', 'e6'];
const broke = (env: string, i: number): QuarantineBreak => ({
  plugin: 'forms',
  version: '2.0.0',
  env_id: env,
  at: T0 + i * 1000,
  why: 'PHP Fatal error in forms',
});
const failed = (env: string): RetryFailure => ({ plugin: 'forms', version: '2.0.0', env_id: env, run: 'r1', at: T0, why: 'HTTP 503' });
const linesOf = (path: string) => readFileSync(path, 'utf8').split('\n').filter(Boolean);

const redis = useRedis();
const linkTo = useRedisLinks();

/**
 * A night broke forms 2.0.0 on six sites; a person released it the next day; the store was made
 * smaller (a file's compaction, the hash at once); then `status` of that night's report recorded its
 * ends again, dated as they happened. The release stands: nothing comes back, nothing is added.
 */
async function releaseOutlivesCompaction(store: QuarantineStore, size: () => Promise<number>) {
  await store.record(ENVS.map(broke));
  await store.record([releaseOf('plugin', 'forms', '2.0', T0 + DAY)]);
  expect(await size()).toBe(1);
  const again = await store.record(ENVS.map(broke));
  expect(again.has('plugin', 'forms', '2.0.0')).toBe(false);
  expect(await size()).toBe(1);
  // A break after the release quarantines it again.
  expect((await store.record([{ ...broke('e1', 0), at: T0 + 2 * DAY }])).get('plugin', 'forms', '2.0.0')?.env_ids).toEqual(['e1']);
}

/** The same of a retry: six failures of one run, a person's clear, the store made smaller, the run's ends recorded again. */
async function clearOutlivesCompaction(store: RetryStore, size: () => Promise<number>) {
  await store.record(ENVS.map(failed));
  await store.record([{ plugin: 'forms', cleared: true, at: T0 + DAY, version: '2.0.0' }]);
  expect(await size()).toBe(1);
  const again = await store.record(ENVS.map(failed));
  expect(ENVS.filter((e) => again.failed(e, 'plugin', 'forms'))).toEqual([]);
  expect(await size()).toBe(1);
}

describe('a release and a clear outlive what they folded away', () => {
  it('in the state folder: the compaction keeps the release, and a break dated before it stays folded away', async () => {
    const store = quarantineFile(tempDir(), COMPANY, { compactAbove: 3 });
    await releaseOutlivesCompaction(store, () => Promise.resolve(linesOf(store.where).length));
  });

  it('in the state folder: the compaction keeps the clear, and the run’s failures recorded again stay cleared', async () => {
    const store = retryFile(tempDir(), COMPANY, { compactAbove: 3 });
    await clearOutlivesCompaction(store, () => Promise.resolve(linesOf(store.where).length));
  });

  it('in Redis: the hash keeps the release and the clear, and loses what they folded away', async () => {
    const link = await linkTo((await redis()).url);
    const quarantine = redisQuarantine(link, COMPANY);
    await releaseOutlivesCompaction(quarantine, () => link.redis.hlen(quarantine.where));
    const retries = redisRetry(link, COMPANY);
    await clearOutlivesCompaction(retries, () => link.redis.hlen(retries.where));
  });

  it('of two releases of a version, or of two clears where the later covers the earlier, the compaction keeps the later', async () => {
    const store = quarantineFile(tempDir(), COMPANY, { compactAbove: 2 });
    const retries = retryFile(tempDir(), COMPANY, { compactAbove: 2 });
    for (let i = 0; i < 6; i++) {
      // Broken again after each release, released again; failed again after each success there, a success again.
      await store.record([{ ...broke('e1', 0), at: T0 + i * DAY + 1 }]);
      await store.record([releaseOf('plugin', 'forms', '2.0.0', T0 + i * DAY + 2)]);
      await retries.record([{ ...failed('e1'), run: `r${i}`, at: T0 + i * DAY + 1 }]);
      await retries.record([{ plugin: 'forms', cleared: true, at: T0 + i * DAY + 2, env_id: 'e1' }]);
    }
    const last = new Date(T0 + 5 * DAY + 2).toISOString();
    expect(linesOf(store.where).map((l) => JSON.parse(l) as Record<string, unknown>)).toEqual([
      { v: 1, plugin: 'forms', version: '2.0.0', released: true, at: last },
    ]);
    expect(linesOf(retries.where).map((l) => JSON.parse(l) as Record<string, unknown>)).toEqual([
      { v: 1, plugin: 'forms', cleared: true, at: last, env_id: 'e1' },
    ]);
  });
});

const forms = (update: string, name = 'forms') => installedItem('plugin', name, '1.0.0', update);
const quiet = { info: () => undefined };

/** What a plan reads the stores as at `now` (nothing of the fleet to fold away), and the warnings it gave. */
async function readBeforePlan(quarantine: QuarantineStore, retries: RetryStore, now = T0) {
  const warnings: string[] = [];
  const w = await withholdingOf(
    { quarantine: () => quarantine, retries: () => retries },
    { company: COMPANY, environments: [], listed: {} },
    {},
    now,
    quiet,
    (l) => warnings.push(l),
  );
  return { w, warnings };
}

describe('a line the store cannot read fails closed', () => {
  it('a quarantine line: what it names is held on every environment, with a warning naming the file and line; compaction keeps it', async () => {
    const dir = tempDir();
    const store = quarantineFile(dir, COMPANY, { compactAbove: 1 });
    await store.record(ENVS.map((env, i) => ({ ...broke(env, i), plugin: 'cache' })));
    // Cut short by a crash (the newline a later append put after it), a later format, and one a field short.
    const unreadable = [
      '{"v":1,"plugin":"forms","version":"2.0.0","env_id":"e1","at":"2026-03',
      '{"v":2,"theme":"astra","version":"1.0"}',
      '{"v":1,"plugin":"seo"}',
    ];
    appendFileSync(store.where, `${unreadable[0]}\n\n${unreadable[1]}\n${unreadable[2]}\n`);
    const { w, warnings } = await readBeforePlan(store, retryFile(dir, COMPANY));
    expect(warnings).toEqual([
      expect.stringContaining(
        `${store.where} line 7: a line of the company's quarantine that cannot be read (not an entry this release can read): plugin forms 2.0.0 is held on every environment`,
      ),
      expect.stringContaining(
        `${store.where} line 9: a line of the company's quarantine that cannot be read (written by a later release of sitefleet): theme astra 1.0 is held`,
      ),
      expect.stringContaining(
        `${store.where} line 10: a line of the company's quarantine that cannot be read (not an entry this release can read): every version of plugin seo is held`,
      ),
    ]);
    expect(judgeWithheld({ id: 'e9' }, forms('2.0'), w)).toMatchObject({
      code: 'unreadable_record',
      store: 'quarantine',
      where: `${store.where} line 7`,
      override: `repair or delete ${store.where} line 7`,
    });
    expect(judgeWithheld({ id: 'e9' }, forms('2.0.1'), w)).toBeUndefined();
    expect(judgeWithheld({ id: 'e9' }, forms('9.0.0', 'seo'), w)?.code).toBe('unreadable_record');
    // A compaction (cache released: its release alone is needed) keeps every line it cannot read, as it was.
    await store.record([releaseOf('plugin', 'cache', '2.0.0', T0 + DAY)]);
    expect(linesOf(store.where)).toEqual([expect.stringContaining('"released":true'), ...unreadable]);
    expect((await store.record([])).unread.map((l) => l.item?.name)).toEqual(['forms', 'astra', 'seo']);
  });

  it('a quarantine line that names nothing it can tell holds every item update, with a warning', async () => {
    const dir = tempDir();
    const store = quarantineFile(dir, COMPANY);
    await store.record([broke('e1', 0)]);
    appendFileSync(store.where, '{"v":1,"plu\n');
    const { w, warnings } = await readBeforePlan(store, retryFile(dir, COMPANY));
    expect(warnings).toEqual([expect.stringContaining(`${store.where} line 2: a line of the company's quarantine that cannot be read`)]);
    expect(warnings[0]).toContain('it names nothing that can be told, so every item update is held');
    expect(judgeWithheld({ id: 'e9' }, forms('3.0.0', 'anything'), w)).toMatchObject({
      code: 'unreadable_record',
      where: `${store.where} line 2`,
    });
  });

  it('a retry line: what it names is held on its environment; one that names nothing holds nothing, and is warned of', async () => {
    const dir = tempDir();
    const retries = retryFile(dir, COMPANY);
    await retries.record([failed('e1')]);
    appendFileSync(retries.where, '{"v":1,"plugin":"forms","env_id":"e2","version":"2.0.0"}\nnot json\n');
    const { w, warnings } = await readBeforePlan(quarantineFile(dir, COMPANY), retries, T0 + 100 * DAY);
    expect(warnings).toEqual([
      expect.stringContaining(
        `${retries.where} line 2: a line of the company's retries that cannot be read (not an entry this release can read): plugin forms 2.0.0 on e2 is held`,
      ),
      expect.stringContaining(
        `${retries.where} line 3: a line of the company's retries that cannot be read (not an entry this release can read): it names nothing`,
      ),
    ]);
    expect(judgeWithheld({ id: 'e2' }, forms('2.0.0'), w)).toMatchObject({ code: 'unreadable_record', store: 'retry', where: `${retries.where} line 2` });
    expect(judgeWithheld({ id: 'e3' }, forms('2.0.0'), w)).toBeUndefined();
  });

  it('in Redis: a field it cannot read stays in the hash and holds what it names, the warning naming the hash and field', async () => {
    const link = await linkTo((await redis()).url);
    const store = redisQuarantine(link, COMPANY);
    await store.record(ENVS.map(broke));
    await link.redis.hset(store.where, '{"v":1,"plugin":"seo","version":"4.0.0"}', '1');
    const table = await store.record([releaseOf('plugin', 'forms', '2.0.0', T0 + DAY)]);
    expect(await link.redis.hlen(store.where)).toBe(2);
    expect(table.unread).toEqual([
      {
        where: `the Redis hash ${store.where}, field {"v":1,"plugin":"seo","version":"4.0.0"}`,
        why: 'not an entry this release can read',
        item: { kind: 'plugin', name: 'seo' },
        version: '4.0.0',
      },
    ]);
    expect(table.unreadFor('plugin', 'seo', '4.0')).toBeDefined();
    expect(table.unreadFor('plugin', 'forms', '2.0.0')).toBeUndefined();
  });
});
