import { appendFileSync, readFileSync, statSync, writeFileSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { firstSeenFile } from '../../src/coord/first-seen-file.js';
import { StateFolderError } from '../../src/errors.js';
import { tempDir } from '../helpers/cli.js';

const COMPANY = '0F1E2D3C-4B5A-4697-8877-665544332211';
const T0 = Date.parse('2026-03-02T02:00:00.000Z');
const DAY = 86_400_000;
const astra = (version: string) => ({ theme: 'astra', version });

describe('first-seen times in the state folder', () => {
  it('appends only what is new, keeps the earlier of two times, and gives the whole table back', async () => {
    const dir = tempDir();
    const store = firstSeenFile(dir, COMPANY);
    expect(store.where).toBe(join(dir, 'first-seen', `${COMPANY.toLowerCase()}.jsonl`));
    const first = await store.record([astra('1.0'), astra('1.1')], T0);
    expect([first.at('theme', 'astra', '1.0'), first.at('theme', 'astra', '1.1')]).toEqual([T0, T0]);
    expect(statSync(store.where).mode & 0o777).toBe(0o600);
    // Seen again later: nothing is written, the time stays; a new version gets the new time.
    const again = await firstSeenFile(dir, COMPANY).record([astra('1.0'), astra('1.2')], T0 + DAY);
    expect([again.at('theme', 'astra', '1.0'), again.at('theme', 'astra', '1.1'), again.at('theme', 'astra', '1.2')]).toEqual([T0, T0, T0 + DAY]);
    expect(readFileSync(store.where, 'utf8').trimEnd().split('\n')).toHaveLength(3);
    // A machine whose clock is behind records an earlier time: the earlier one is kept.
    const behind = await store.record([astra('1.2')], T0);
    expect(behind.at('theme', 'astra', '1.2')).toBe(T0);
  });

  it('a line cut by a crash is not read and does not spoil the next one', async () => {
    const dir = tempDir();
    const store = firstSeenFile(dir, COMPANY);
    await store.record([astra('1.0')], T0);
    appendFileSync(store.where, '{"theme":"astra","version":"1.1","first_se');
    const after = await store.record([astra('1.1')], T0 + DAY);
    expect(after.at('theme', 'astra', '1.1')).toBe(T0 + DAY);
    const reread = await firstSeenFile(dir, COMPANY).record([], T0 + 2 * DAY);
    expect([reread.at('theme', 'astra', '1.0'), reread.at('theme', 'astra', '1.1')]).toEqual([T0, T0 + DAY]);
  });

  it('reads the lines of the release before (no format version, 6.0 spelled short): 6.0 and 6.0.0 are one version, and nothing is appended for it', async () => {
    const dir = tempDir();
    const store = firstSeenFile(dir, COMPANY);
    mkdirSync(join(dir, 'first-seen'));
    const old = `${JSON.stringify({ theme: 'astra', version: '6.0', first_seen: new Date(T0).toISOString() })}\n`;
    writeFileSync(store.where, old);
    const table = await store.record([astra('6.0.0'), astra('6.0'), astra('6.1')], T0 + DAY);
    expect([table.at('theme', 'astra', '6.0'), table.at('theme', 'astra', '6.0.0'), table.at('theme', 'astra', '6.1.0')]).toEqual([T0, T0, T0 + DAY]);
    // Only 6.1 was lacking: written once, by its key, with the format's version.
    const lines = readFileSync(store.where, 'utf8').split('\n').filter(Boolean);
    expect(lines).toEqual([old.trimEnd(), JSON.stringify({ v: 1, theme: 'astra', version: '6.1.0', first_seen: new Date(T0 + DAY).toISOString() })]);
  });

  it('a store past its size is rewritten with the earliest time of each version, keeping lines of a later format', async () => {
    const dir = tempDir();
    const store = firstSeenFile(dir, COMPANY, { compactAbove: 4 });
    mkdirSync(join(dir, 'first-seen'));
    const line = (version: string, at: number) => JSON.stringify({ theme: 'astra', version, first_seen: new Date(at).toISOString() });
    const later = JSON.stringify({ v: 2, theme: 'astra', version: '9.9', seen: 'some day' });
    // What the release before left after many nights: the same versions over and over, a cut line, and a later format's line.
    const lines = [
      line('1.0', T0 + DAY),
      line('1.0.0', T0),
      later,
      '{"theme":"astra","vers',
      line('1.1', T0 + 2 * DAY),
      line('1.0', T0 + 3 * DAY),
      line('1.1.0', T0 + 2 * DAY),
      later,
    ];
    writeFileSync(store.where, `${lines.join('\n')}\n`, { mode: 0o600 });
    const table = await store.record([astra('1.2')], T0 + 4 * DAY);
    const now = readFileSync(store.where, 'utf8').split('\n').filter(Boolean);
    expect(now).toEqual([
      JSON.stringify({ v: 1, theme: 'astra', version: '1.0.0', first_seen: new Date(T0).toISOString() }),
      JSON.stringify({ v: 1, theme: 'astra', version: '1.1.0', first_seen: new Date(T0 + 2 * DAY).toISOString() }),
      JSON.stringify({ v: 1, theme: 'astra', version: '1.2.0', first_seen: new Date(T0 + 4 * DAY).toISOString() }),
      later,
    ]);
    expect(statSync(store.where).mode & 0o777).toBe(0o600);
    // The table read back is the one it was before.
    const reread = await firstSeenFile(dir, COMPANY, { compactAbove: 4 }).record([], T0 + 5 * DAY);
    expect([...reread.entries()]).toEqual([...table.entries()]);
    // Under its size, a file is left as it is.
    expect(readFileSync(store.where, 'utf8').split('\n').filter(Boolean)).toEqual(now);
  });

  it('names no file after anything but a company UUID', () => {
    expect(() => firstSeenFile(tempDir(), '../../etc')).toThrow(StateFolderError);
  });
});
