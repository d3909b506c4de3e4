import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { quarantineFile, retryFile } from '../../src/coord/quarantine-file.js';
import { redisQuarantine, redisRetry } from '../../src/coord/redis/table-hash.js';
import type { QuarantineStore, RetryStore } from '../../src/coord/types.js';
import { releaseOf, type QuarantineBreak } from '../../src/inventory/quarantine-table.js';
import type { RetryFailure } from '../../src/inventory/retry-table.js';
import type { InstalledItem, Inventory } from '../../src/inventory/inventory.js';
import { judgeWithheld } from '../../src/inventory/withheld.js';
import { withholdingOf } from '../../src/app/withheld-record.js';
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
  // A release of what is not held adds nothing; nor does the night's end recorded again (`status`), dated as it was.
  const size0 = await size();
  await store.record([releaseOf('plugin', 'forms', '9.9.9', T0 + 3 * DAY), broke(A, T0), broke(B, T0 + DAY)]);
  expect(await size()).toBe(size0);
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
  // A success with nothing to clear adds nothing; nor does a run's end recorded again (`status`), dated as it was.
  const size0 = await size();
  await store.record([{ plugin: 'forms', cleared: true, at: T0 + 3 * DAY, env_id: A }, failed('r1', T0), failed('r2', T0 + DAY)]);
  expect(await size()).toBe(size0);
  expect((await store.record([])).failed(A, 'plugin', 'forms')).toBe(false);
}

const plugin = (name: string, version: string, update_version: string): InstalledItem => ({
  kind: 'plugin',
  name,
  status: 'active',
  version,
  version_vulnerable: false,
  update_available: true,
  update_version,
  update_vulnerable: false,
  update_status: '',
  auto_update_type: '',
});
/** The fleet the next plan reads: A was deleted; B is offered forms 2.1.0 (past the quarantined 2.0.0) and cache 1.5.0. */
const movedOn: Inventory = {
  company: COMPANY,
  environments: [{ id: B, site: 'shop', name: 'live', items: { plugin: [plugin('cache', '1.0.0', '1.5.0'), plugin('forms', '1.0.0', '2.1.0')] } }],
  listed: { theme: { count: 1 }, plugin: { count: 2 } },
};
const quiet = { info: () => undefined };

/**
 * The stores fed with what the fleet moved past, then read before a plan from `movedOn`: what means
 * nothing folds away, what still holds is still withheld. Returns nothing: `sizes` tell the store's story.
 */
async function prunedStory(quarantine: QuarantineStore, retries: RetryStore, sizes: () => Promise<[number, number]>) {
  await quarantine.record([broke(A, T0), broke(B, T0 + 1000), { ...broke(A, T0), plugin: 'cache', version: '1.5.0' }]);
  await retries.record([failed('r1', T0, A), { ...failed('r1', T0, B), version: '2.1.0' }]);
  expect(await sizes()).toEqual([3, 2]);
  const w = await withholdingOf({ quarantine: () => quarantine, retries: () => retries }, movedOn, {}, T0 + DAY / 2, quiet);
  expect(w.quarantine.list().map((q) => `${q.name}@${q.version}`)).toEqual(['cache@1.5.0']);
  expect(w.retries.standing().map((f) => [f.env_id, f.version])).toEqual([[B, '2.1.0']]);
  const [cache, forms] = movedOn.environments[0]!.items.plugin!;
  expect(judgeWithheld({ id: B }, cache!, w)?.code).toBe('quarantined');
  expect(judgeWithheld({ id: B }, forms!, w)?.code).toBe('retry_later');
  // Read again (the next plan): nothing more to fold, nothing written.
  await withholdingOf({ quarantine: () => quarantine, retries: () => retries }, movedOn, {}, T0 + DAY / 2, quiet);
  // The night's ends recorded again (a `status` of its report), dated as they were: what was folded away stays so.
  const before = await sizes();
  await quarantine.record([broke(A, T0), broke(B, T0 + 1000)]);
  await retries.record([failed('r1', T0, A)]);
  expect(await sizes()).toEqual(before);
  expect((await quarantine.record([])).list().map((q) => `${q.name}@${q.version}`)).toEqual(['cache@1.5.0']);
  expect((await retries.record([])).standing().map((f) => f.env_id)).toEqual([B]);
}

describe('quarantine and retry, in the state folder', () => {
  it('a plan folds away what the fleet moved past: a superseded version, a failure on a deleted environment; recorded again, they stay folded', async () => {
    const dir = tempDir();
    const quarantine = quarantineFile(dir, COMPANY, { compactAbove: 2 });
    const retries = retryFile(dir, COMPANY, { compactAbove: 2 });
    await prunedStory(quarantine, retries, () => Promise.resolve([linesOf(quarantine.where).length, linesOf(retries.where).length]));
    // Not twice what the tables keep (what stands, and the release and clear that folded the rest): not compacted.
    expect([linesOf(quarantine.where).length, linesOf(retries.where).length]).toEqual([4, 3]);
  });

  it('what folds a quarantined version or a failure away is a line saying when and why', async () => {
    const dir = tempDir();
    const quarantine = quarantineFile(dir, COMPANY);
    const retries = retryFile(dir, COMPANY);
    await prunedStory(quarantine, retries, () => Promise.resolve([linesOf(quarantine.where).length, linesOf(retries.where).length]));
    const at = new Date(T0 + DAY / 2).toISOString();
    expect(JSON.parse(linesOf(quarantine.where).at(-1)!)).toEqual({ v: 1, plugin: 'forms', version: '2.0.0', released: true, superseded_by: '2.1.0', at });
    expect(JSON.parse(linesOf(retries.where).at(-1)!)).toEqual({
      v: 1,
      plugin: 'forms',
      cleared: true,
      at,
      env_id: A,
      version: '2.0.0',
      why: 'the environment is not in the listing any more',
    });
    expect([linesOf(quarantine.where).length, linesOf(retries.where).length]).toEqual([4, 3]);
  });

  it('appends what changes the table: a release is a line of its own, after the breaks it folds away', async () => {
    const store = quarantineFile(tempDir(), COMPANY, { compactAbove: 3 });
    await quarantineStory(store, () => Promise.resolve(linesOf(store.where).length));
    expect(linesOf(store.where).map((l) => (JSON.parse(l) as { version: string; released?: true }).version)).toEqual(['2.0.0', '2.0.0', '3.0.0', '2.0.0']);
    expect(JSON.parse(linesOf(store.where).at(-1)!)).toMatchObject({ released: true });
  });

  it('retries: one failure a run, a success clears; a clear is a line of its own', async () => {
    const store = retryFile(tempDir(), COMPANY, { compactAbove: 2 });
    await retryStory(store, () => Promise.resolve(linesOf(store.where).length));
    expect(linesOf(store.where).map((l) => (JSON.parse(l) as { env_id: string; cleared?: true }).env_id)).toEqual([A, A, B, A]);
  });
});

describe('quarantine and retry, in Redis', () => {
  it('a plan folds away what the fleet moved past, and the hashes lose those fields at once', async () => {
    const link = await linkTo((await redis()).url);
    const quarantine = redisQuarantine(link, COMPANY);
    const retries = redisRetry(link, COMPANY);
    await prunedStory(quarantine, retries, async () => [await link.redis.hlen(quarantine.where), await link.redis.hlen(retries.where)]);
    // What stands, and the release and the clear that folded the rest away.
    expect([await link.redis.hlen(quarantine.where), await link.redis.hlen(retries.where)]).toEqual([2, 2]);
  });

  it('one field per entry; a release takes the entries it folds away out of the hash, and stays', async () => {
    const link = await linkTo((await redis()).url);
    const store = redisQuarantine(link, COMPANY);
    await quarantineStory(store, () => link.redis.hlen(store.where));
    expect(await link.redis.hlen(store.where)).toBe(2);
    // Another machine naming the company in capitals reads the same table.
    expect((await redisQuarantine(link, COMPANY.toUpperCase()).record([])).has('plugin', 'forms', '3.0.0')).toBe(true);
  });

  it('retries: one failure a run, a success clears what it folds away out of the hash, and stays', async () => {
    const link = await linkTo((await redis()).url);
    const store = redisRetry(link, COMPANY);
    await retryStory(store, () => link.redis.hlen(store.where));
    // B's failure, and A's clear.
    expect(await link.redis.hlen(store.where)).toBe(2);
  });
});
