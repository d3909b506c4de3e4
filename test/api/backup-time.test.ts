import { describe, expect, it } from 'vitest';
import { summarizeBackups } from '../../src/app/backups-check.js';
import { backupCreatedMs } from '../../src/api/backup-time.js';
import type { Environment } from '../../src/inventory/inventory.js';

const NOW = Date.parse('2026-11-24T06:00:00Z');
const env = { site: 'shop', name: 'live', id: 'e1' } as unknown as Environment;
const backup = (created_at: unknown) => ({ id: 7, name: 'nightly', note: '', type: 'manual', created_at }) as never;

describe("a backup's created_at, whatever unit the service sends", () => {
  it('reads milliseconds (the spec) and seconds as the same instant', () => {
    const at = Date.parse('2026-11-24T02:00:00Z');
    expect(backupCreatedMs(at)).toBe(at);
    expect(backupCreatedMs(at / 1000)).toBe(at);
  });

  it('says "not known" for what is no time at all, never 1970', () => {
    for (const v of [null, undefined, 'yesterday', '2026-11-24T02:00:00Z', {}, -5, Number.NaN, true]) expect(backupCreatedMs(v)).toBeUndefined();
  });

  it('backups --max-age: a backup four hours old is fresh whether its time came in seconds or milliseconds', () => {
    const at = NOW - 4 * 3_600_000;
    for (const created of [at, at / 1000]) {
      const row = summarizeBackups(env, [backup(created)], NOW, 26 * 3_600_000);
      expect(row.fresh).toBe(true);
      expect(row.newest.manual).toEqual({ id: 7, name: 'nightly', created_at: '2026-11-24T02:00:00.000Z', age_s: 4 * 3600, fresh: true });
    }
  });

  it('a backup whose time cannot be read counts as no backup (stale), and shows no date', () => {
    const row = summarizeBackups(env, [backup('garbled')], NOW, 26 * 3_600_000);
    expect(row.fresh).toBe(false);
    expect(row.newest.manual).toEqual({ id: 7, name: 'nightly', created_at: null, age_s: null, fresh: false });
  });
});
