import { appendFileSync, readFileSync, statSync } from 'node:fs';
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
    expect([first.at('astra', '1.0'), first.at('astra', '1.1')]).toEqual([T0, T0]);
    expect(statSync(store.where).mode & 0o777).toBe(0o600);
    // Seen again later: nothing is written, the time stays; a new version gets the new time.
    const again = await firstSeenFile(dir, COMPANY).record([astra('1.0'), astra('1.2')], T0 + DAY);
    expect([again.at('astra', '1.0'), again.at('astra', '1.1'), again.at('astra', '1.2')]).toEqual([T0, T0, T0 + DAY]);
    expect(readFileSync(store.where, 'utf8').trimEnd().split('\n')).toHaveLength(3);
    // A machine whose clock is behind records an earlier time: the earlier one is kept.
    const behind = await store.record([astra('1.2')], T0);
    expect(behind.at('astra', '1.2')).toBe(T0);
  });

  it('a line cut by a crash is not read and does not spoil the next one', async () => {
    const dir = tempDir();
    const store = firstSeenFile(dir, COMPANY);
    await store.record([astra('1.0')], T0);
    appendFileSync(store.where, '{"theme":"astra","version":"1.1","first_se');
    const after = await store.record([astra('1.1')], T0 + DAY);
    expect(after.at('astra', '1.1')).toBe(T0 + DAY);
    const reread = await firstSeenFile(dir, COMPANY).record([], T0 + 2 * DAY);
    expect([reread.at('astra', '1.0'), reread.at('astra', '1.1')]).toEqual([T0, T0 + DAY]);
  });

  it('names no file after anything but a company UUID', () => {
    expect(() => firstSeenFile(tempDir(), '../../etc')).toThrow(StateFolderError);
  });
});
