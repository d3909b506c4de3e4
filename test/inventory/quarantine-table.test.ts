import { describe, expect, it } from 'vitest';
import { QuarantineTable, releaseOf, type QuarantineBreak } from '../../src/inventory/quarantine-table.js';
import { RetryTable, type RetryFailure } from '../../src/inventory/retry-table.js';

const T0 = Date.parse('2026-03-02T02:00:00.000Z');
const DAY = 86_400_000;
const A = 'aaaaaaaa-2222-4333-8444-555555555555';
const B = 'bbbbbbbb-2222-4333-8444-555555555555';
const broke = (env: string, at: number, plugin = 'forms', version = '2.0.0'): QuarantineBreak => ({
  plugin,
  version,
  env_id: env,
  at,
  why: `broke ${env.slice(0, 1)}`,
});

describe('the quarantine table', () => {
  it('holds a version from its first break, names every environment it broke, whatever the order of the lines', () => {
    const table = QuarantineTable.of([broke(B, T0 + DAY), broke(A, T0), broke(A, T0 + 2 * DAY)]);
    const held = table.get('plugin', 'forms', '2.0');
    expect(held).toMatchObject({ kind: 'plugin', name: 'forms', first: { env_id: A, at: T0, why: 'broke a' }, env_ids: [A, B] });
    // Only that version, of that kind: a newer one, or a theme of the same name, goes.
    expect(table.has('plugin', 'forms', '2.0.1')).toBe(false);
    expect(table.has('theme', 'forms', '2.0.0')).toBe(false);
    expect(table.standing()).toEqual([broke(A, T0), broke(B, T0 + DAY)]);
  });

  it('a release folds away every break before it (a break after it holds again), and what stands no longer names it', () => {
    const lines = [broke(A, T0), releaseOf('plugin', 'forms', '2.0.0', T0 + DAY), broke(B, T0 + 2 * DAY), broke(A, T0, 'other')];
    const table = QuarantineTable.of(lines);
    expect(table.get('plugin', 'forms', '2.0.0')).toMatchObject({ first: { env_id: B }, env_ids: [B] });
    const released = QuarantineTable.of([...lines, releaseOf('plugin', 'forms', '2.0.0', T0 + 3 * DAY)]);
    expect(released.has('plugin', 'forms', '2.0.0')).toBe(false);
    expect(released.standing()).toEqual([broke(A, T0, 'other')]);
    expect(released.list().map((q) => q.name)).toEqual(['other']);
  });

  it('is added to within a run, and says in which kinds a name@version is held', () => {
    const table = QuarantineTable.of([]);
    expect(table.has('plugin', 'forms', '2.0.0')).toBe(false);
    table.add([broke(A, T0), { theme: 'forms', version: '2.0.0', env_id: B, at: T0, why: 'x' }]);
    expect(table.has('plugin', 'forms', '2.0.0')).toBe(true);
    expect(table.kindsOf('forms', '2.0')).toEqual(['plugin', 'theme']);
  });
});

const failed = (at: number, run: string, version = '2.0.0', env = A): RetryFailure => ({ plugin: 'forms', version, env_id: env, run, at, why: 'HTTP 503' });
const BACKOFF = [1, 2, 4, 8, 16, 30].map((d) => d * DAY);

describe('the retry table', () => {
  it('waits 1, 2, 4… days after each failure of a run, the last wait repeating; a run recorded twice is one failure', () => {
    const runs = ['r1', 'r2', 'r3', 'r4', 'r5', 'r6', 'r7'];
    const waits = runs.map((_, i) => {
      const lines = runs.slice(0, i + 1).flatMap((run, j) => [failed(T0 + j * 100 * DAY, run), failed(T0 + j * 100 * DAY + 1000, run)]);
      const state = RetryTable.of(lines).state(A, 'plugin', 'forms', '2.0', BACKOFF)!;
      return { n: state.failures.length, wait: (state.retry_at - (T0 + i * 100 * DAY)) / DAY };
    });
    expect(waits).toEqual([1, 2, 4, 8, 16, 30, 30].map((wait, i) => ({ n: i + 1, wait })));
  });

  it('keys by environment and version: another environment, or a newer version, is not held', () => {
    const table = RetryTable.of([failed(T0, 'r1')]);
    expect(table.state(B, 'plugin', 'forms', '2.0.0', BACKOFF)).toBeUndefined();
    expect(table.state(A, 'plugin', 'forms', '2.0.1', BACKOFF)).toBeUndefined();
    expect(table.state(A, 'theme', 'forms', '2.0.0', BACKOFF)).toBeUndefined();
  });

  it("a success of the item on the environment clears its failures before it; a person's clear of a version clears it everywhere", () => {
    const lines = [failed(T0, 'r1'), failed(T0, 'r1', '2.0.0', B), failed(T0 + DAY, 'r2', '1.9.0')];
    const success = RetryTable.of([...lines, { plugin: 'forms', cleared: true, at: T0 + 2 * DAY, env_id: A }, failed(T0 + 3 * DAY, 'r3')]);
    expect(success.state(A, 'plugin', 'forms', '2.0.0', BACKOFF)?.failures.map((f) => f.run)).toEqual(['r3']);
    expect(success.state(A, 'plugin', 'forms', '1.9.0', BACKOFF)).toBeUndefined();
    expect(success.state(B, 'plugin', 'forms', '2.0.0', BACKOFF)).toBeDefined();
    const person = RetryTable.of([...lines, { plugin: 'forms', cleared: true, at: T0 + 2 * DAY, version: '2.0' }]);
    expect(person.standing().map((f) => [f.env_id, f.version])).toEqual([[A, '1.9.0']]);
    expect(person.failed(B, 'plugin', 'forms')).toBe(false);
  });
});
