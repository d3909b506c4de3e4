import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { STAGING_LINES, stagingFile } from '../../src/coord/staging-file.js';
import type { StagingEntry } from '../../src/inventory/staging-table.js';
import { tempDir } from '../helpers/cli.js';

const COMPANY = '0f1e2d3c-4b5a-4697-8877-665544332211';
const T0 = Date.parse('2026-03-02T02:00:00.000Z');
const HOUR = 3_600_000;
const ENV = '11111111-2222-4333-8444-555555555555';
const healthy = (at: number, version = '1.0.1'): StagingEntry => ({ env_id: ENV, theme: 'calm', version, kind: 'healthy', at });
const failed = (at: number, why: string): StagingEntry => ({ env_id: ENV, theme: 'calm', version: '1.0.1', kind: 'failed', at, why });
const linesOf = (path: string) => readFileSync(path, 'utf8').split('\n').filter(Boolean);

describe('what staging ran, in the state folder', () => {
  it('appends only what the store lacks: an end recorded again at a later time adds nothing, an earlier one a line', async () => {
    const store = stagingFile(tempDir(), COMPANY);
    await store.record([healthy(T0)]);
    expect(linesOf(store.where)).toEqual([
      JSON.stringify({ v: 1, env_id: ENV, theme: 'calm', version: '1.0.1', kind: 'healthy', at: new Date(T0).toISOString() }),
    ]);
    for (const at of [T0, T0 + HOUR, T0 + 2 * HOUR]) await store.record([healthy(at), healthy(at)]);
    expect(linesOf(store.where)).toHaveLength(1);
    // A machine whose clock is behind: its earlier time stands, so it is written.
    const table = await store.record([healthy(T0 - HOUR), failed(T0 + HOUR, 'broke the site')]);
    expect(linesOf(store.where)).toHaveLength(3);
    expect(table.get(ENV, { kind: 'theme', name: 'calm' }, '1.0.1')).toEqual({ healthy: T0 - HOUR, failed: { at: T0 + HOUR, why: 'broke the site' } });
  });

  it('is compacted past its size (and twice the lines it needs) to one line per end, the earliest, reading the lines of the release before', async () => {
    const dir = tempDir();
    const store = stagingFile(dir, COMPANY, { compactAbove: 4 });
    mkdirSync(join(dir, 'staging'));
    const old = (e: StagingEntry) => JSON.stringify(STAGING_LINES.toRecord(e));
    // What every `status` of the release before appended again: the same ends, later each time.
    const lines = [
      healthy(T0),
      failed(T0 + HOUR, 'first'),
      healthy(T0 + HOUR),
      failed(T0 + HOUR, 'same time, later line'),
      healthy(T0 + 2 * HOUR),
      failed(T0 + 2 * HOUR, 'again'),
    ].map(old);
    writeFileSync(store.where, `${lines.join('\n')}\n`);
    const before = await stagingFile(dir, COMPANY).record([]);
    const table = await store.record([healthy(T0 + 3 * HOUR, '1.0.2')]);
    expect(linesOf(store.where).map((l) => JSON.parse(l) as Record<string, unknown>)).toEqual([
      { v: 1, env_id: ENV, theme: 'calm', version: '1.0.1', kind: 'healthy', at: new Date(T0).toISOString() },
      { v: 1, env_id: ENV, theme: 'calm', version: '1.0.1', kind: 'failed', at: new Date(T0 + HOUR).toISOString(), why: 'first' },
      { v: 1, env_id: ENV, theme: 'calm', version: '1.0.2', kind: 'healthy', at: new Date(T0 + 3 * HOUR).toISOString() },
    ]);
    expect(table.get(ENV, { kind: 'theme', name: 'calm' }, '1.0.1')).toEqual(before.get(ENV, { kind: 'theme', name: 'calm' }, '1.0.1'));
    expect(table.get(ENV, { kind: 'theme', name: 'calm' }, '1.0.1')).toEqual({ healthy: T0, failed: { at: T0 + HOUR, why: 'first' } });
  });
});
