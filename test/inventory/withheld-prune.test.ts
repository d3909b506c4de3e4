import { describe, expect, it } from 'vitest';
import type { Environment, InstalledItem, Inventory } from '../../src/inventory/inventory.js';
import { versionItem } from '../../src/inventory/inventory.js';
import { QuarantineTable, type QuarantineBreak } from '../../src/inventory/quarantine-table.js';
import { RetryTable, type RetryFailure } from '../../src/inventory/retry-table.js';
import { retriesGoneOf, supersededOf } from '../../src/inventory/withheld-prune.js';

const T0 = Date.parse('2026-03-02T02:00:00.000Z');
const DAY = 86_400_000;
const BACKOFF = [1, 2, 4, 8, 16, 30].map((d) => d * DAY);

const plugin = (name: string, version: string, update_version = ''): InstalledItem => ({
  kind: 'plugin',
  name,
  status: 'active',
  version,
  version_vulnerable: false,
  update_available: update_version !== '',
  update_version,
  update_vulnerable: false,
  update_status: '',
  auto_update_type: '',
});
const env = (id: string, plugins?: InstalledItem[]): Environment => ({ id, site: id, name: 'live', items: plugins ? { plugin: plugins } : {} });
const fleet = (envs: Environment[], listed: Inventory['listed'] = { plugin: { count: 1 } }): Inventory => ({ company: 'c', environments: envs, listed });
const broke = (env_id: string, version: string, name = 'forms'): QuarantineBreak => ({ plugin: name, version, env_id, at: T0, why: 'fatal' });
const failed = (env_id: string, version: string, run = 'r1', at = T0): RetryFailure => ({ plugin: 'forms', version, env_id, run, at, why: 'HTTP 503' });

describe('quarantined versions the fleet moved past', () => {
  const table = QuarantineTable.of([broke('a', '2.0.0'), broke('b', '2.0.0'), broke('a', '1.5.0', 'cache')]);

  it('a newer version offered and the quarantined one offered nowhere: released, naming the newest', () => {
    const inventory = fleet([env('a', [plugin('forms', '1.0.0', '2.1.0'), plugin('cache', '1.0.0', '1.5.0')]), env('b', [plugin('forms', '2.2.0')])]);
    expect(supersededOf(table, inventory, T0 + DAY)).toEqual([{ plugin: 'forms', version: '2.0.0', released: true, at: T0 + DAY, superseded_by: '2.2.0' }]);
  });

  it('held while any environment is still offered it (`2.0` is `2.0.0`), or while nothing newer shows', () => {
    const stillOffered = fleet([env('a', [plugin('forms', '1.0.0', '2.1.0')]), env('b', [plugin('forms', '1.0.0', '2.0')])]);
    expect(supersededOf(table, stillOffered, T0 + DAY)).toEqual([]);
    const nothingNewer = fleet([env('a', [plugin('forms', '1.0.0')]), env('b', [])]);
    expect(supersededOf(table, nothingNewer, T0 + DAY)).toEqual([]);
  });

  it('nothing folds from a kind the inventory could not look at whole', () => {
    const moved = [env('a', [plugin('forms', '1.0.0', '2.1.0')])];
    expect(supersededOf(table, fleet(moved, {}), T0 + DAY)).toEqual([]);
    expect(supersededOf(table, fleet(moved, { plugin: { count: 1, from_environments: 'no ids' } }), T0 + DAY)).toEqual([]);
    expect(supersededOf(table, fleet(moved, { plugin: { count: 0, unavailable: 'gone' } }), T0 + DAY)).toEqual([]);
  });

  it('WordPress is never superseded from its listing: a playbook may name any version', () => {
    const core = QuarantineTable.of([{ core: 'wordpress', version: '6.5.0', env_id: 'a', at: T0, why: 'fatal' }]);
    const inventory: Inventory = {
      company: 'c',
      environments: [{ ...env('a'), items: { core: [versionItem('core', 'wordpress', '6.6.0', [])] } }],
      listed: { core: { count: 1 } },
    };
    expect(supersededOf(core, inventory, T0 + DAY)).toEqual([]);
  });
});

describe('retry failures that mean nothing any more', () => {
  const at = T0 + DAY;
  // A table a test may add to (add is in place): each test builds its own.
  const tableOf = () =>
    RetryTable.of([
      failed('gone', '2.0.0'),
      failed('removed', '2.0.0'),
      failed('moved', '2.0.0'),
      failed('waiting', '2.0.0'),
      failed('waiting', '2.0.0', 'r2', T0 + 1000),
    ]);
  const inventory = fleet([
    env('removed', [plugin('other', '1.0.0')]),
    env('moved', [plugin('forms', '2.0.0', '2.1.0')]),
    env('waiting', [plugin('forms', '1.0.0', '2.0.0')]),
  ]);

  it('cleared where the environment is gone, the item removed, or the version no longer offered; kept where it is', () => {
    const table = tableOf();
    const clears = retriesGoneOf(table, inventory, BACKOFF, at);
    expect(clears.map((c) => [c.env_id, c.version, c.at, c.why])).toEqual([
      ['gone', '2.0.0', at, 'the environment is not in the listing any more'],
      ['removed', '2.0.0', at, 'the item is not on the environment any more'],
      ['moved', '2.0.0', at, '2.0.0 is not offered there any more (it runs 2.0.0, offered 2.1.0)'],
    ]);
    const after = table.add(clears);
    expect(after.standing().map((f) => f.env_id)).toEqual(['waiting', 'waiting']);
    expect(after.state('waiting', 'plugin', 'forms', '2.0.0', BACKOFF)?.retry_at).toBe(T0 + 1000 + 2 * DAY);
  });

  it('an environment read one by one judges only the environments read', () => {
    const partial = fleet([env('moved', [plugin('forms', '2.1.0')]), env('waiting')], { plugin: { count: 1, from_environments: 'no ids' } });
    expect(retriesGoneOf(tableOf(), partial, BACKOFF, at).map((c) => c.env_id)).toEqual(['moved']);
    expect(retriesGoneOf(tableOf(), fleet([], {}), BACKOFF, at)).toEqual([]);
  });

  it('a failure no run tried for 90 days (the longest wait a playbook may set) past its date goes, whatever was read; at its date it stays', () => {
    const unread = fleet([], {});
    const due = T0 + 1000 + 2 * DAY;
    const envsAt = (now: number) => retriesGoneOf(tableOf(), unread, BACKOFF, now).map((c) => c.env_id);
    // The single failures were due a day after T0, the pair (two in a row) two days after its last.
    expect(envsAt(T0 + DAY + 90 * DAY)).toEqual([]);
    expect(envsAt(T0 + DAY + 90 * DAY + 1)).toEqual(['gone', 'removed', 'moved']);
    expect(envsAt(due + 90 * DAY)).toEqual(['gone', 'removed', 'moved']);
    const expired = retriesGoneOf(tableOf(), unread, BACKOFF, due + 90 * DAY + 1);
    expect(expired.map((c) => c.env_id)).toEqual(['gone', 'removed', 'moved', 'waiting']);
    expect(expired.at(-1)!.why).toBe(`due since ${new Date(due).toISOString()} and tried by no run for 90d: its backoff starts over`);
  });
});
