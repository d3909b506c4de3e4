import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import type { Backup } from '../../src/api/types.js';
import type { Step } from '../../src/plan/plan.js';
import { beyondKeep, decideRoom, makeRoom, seriesOf, type SlotPort } from '../../src/run/backup-slots.js';
import type { Watcher } from '../../src/run/watcher.js';
import type { CallPort } from '../../src/run/caller.js';
import { findRestorePoint } from '../../src/run/restore-point.js';

const b = (id: number, note: string, created_at: number, type = 'manual'): Backup => ({ id, name: `n-${id}`, note, type, created_at });
const ours = (tag: string) => tag.startsWith('sitefleet-');
const NONE = new Set<number>();

describe('decideRoom: making room for one more manual backup', () => {
  const people = [b(1, 'before the move', 10), b(2, 'launch', 20), b(3, 'x', 30)];
  const theirs = [b(4, 'sitefleet-before-php-2026-11-01', 40), b(5, 'sitefleet-before-php-2026-11-02', 50)];
  const daily = b(9, 'daily', 5, 'scheduled');

  it('fewer manual backups than slots: room, nothing removed (a scheduled one takes no slot)', () => {
    expect(decideRoom([...people, theirs[0]!, daily], 5, ours, NONE)).toEqual({ kind: 'room', remove: [] });
  });
  it("full: sitefleet's oldest goes, never a person's, however old", () => {
    expect(decideRoom([...theirs.slice().reverse(), ...people], 5, ours, NONE)).toEqual({ kind: 'room', remove: [theirs[0]] });
  });
  it('over by two (slots lowered): the two oldest of its own', () => {
    expect(decideRoom([...people, ...theirs], 4, ours, NONE)).toEqual({ kind: 'room', remove: theirs });
  });
  it("full of a person's, or of what the run still needs: full", () => {
    expect(decideRoom([...people, b(6, 'a', 1), b(7, 'b', 2)], 5, ours, NONE)).toEqual({ kind: 'full', manual: 5 });
    expect(decideRoom([...people, ...theirs], 5, ours, new Set([4, 5]))).toEqual({ kind: 'full', manual: 5 });
  });
});

describe('beyondKeep and seriesOf', () => {
  const series = seriesOf('sitefleet-before-php-2026-11-03', '2026-11-03');
  it('a series is its tag on any date, whole: not the rounds, not another task', () => {
    expect(series.test('sitefleet-before-php-2025-01-31')).toBe(true);
    expect(series.test('sitefleet-before-php-2025-01-31-round-1')).toBe(false);
    expect(series.test('sitefleet-before-php-x-2025-01-31')).toBe(false);
  });
  it('keeps the newest N of the series, and removes the rounds given', () => {
    const list = [b(1, 'sitefleet-before-php-2026-11-01', 1), b(2, 'sitefleet-before-php-2026-11-02', 2), b(3, 'sitefleet-before-php-2026-11-03', 3)];
    const rounds = /^sitefleet-before-php-\d{4}-\d{2}-\d{2}-round-\d+$/;
    const round = b(4, 'sitefleet-before-php-2026-11-03-round-1', 4);
    expect(beyondKeep([...list, round, b(5, 'person', 0)], series, 1, NONE, rounds).map((x) => x.id)).toEqual([1, 2, 4]);
    expect(beyondKeep(list, series, 0, new Set([3])).map((x) => x.id)).toEqual([1, 2]);
  });
});

describe('findRestorePoint: each run its own restore point', () => {
  it("a backup with this very tag from an earlier run is never this run's: without its own in the list, the id stays unknown", async () => {
    const tag = 'sitefleet-before-php-2026-11-03';
    const caller = { read: () => Promise.resolve({ environment: { display_name: 'live', backups: [b(41, tag, 100)] } }) } as unknown as CallPort;
    const step = { body: { tag }, params: { env_id: 'e1' } } as unknown as Step;
    const found = await findRestorePoint(caller, step, pino({ level: 'silent' }), new Set([41]));
    expect(found.point).toEqual({ tag, backup_id: null });
  });
});

describe('makeRoom: a removal refused after another went', () => {
  it('fails, and still names the backup that went (the slot it freed is not a thing the record may forget)', async () => {
    // Six manual backups and five slots: two of sitefleet's go; the service removes the first and refuses the second.
    const list = [b(1, 'launch', 10), b(2, 'x', 20), b(3, 'y', 30), b(4, 'sitefleet-a-2026-11-01', 40), b(5, 'sitefleet-a-2026-11-02', 50), b(6, 'z', 60)];
    const deleted: string[] = [];
    const caller = {
      read: () => Promise.resolve({ environment: { display_name: 'live', backups: list } }),
      withPlace: (_p: unknown, _n: string, fn: (place: unknown) => unknown) => fn(undefined),
      call: (_e: string, params: { backup_id: string }) => {
        deleted.push(params.backup_id);
        const data = params.backup_id === '4' ? {} : { status: 409, message: 'backup locked' };
        return Promise.resolve({ ok: true, value: { data } });
      },
    } as unknown as CallPort;
    const port: SlotPort = { caller, watcher: {} as Watcher, watch: {} as never, logger: pino({ level: 'silent' }), slots: 5, ours, spared: NONE };
    const room = await makeRoom(port, 'env-1', 'sitefleet-a-2026-11-27', 'site/live');
    expect(deleted).toEqual(['4', '5']);
    expect(room).toMatchObject({ kind: 'failed', reason: expect.stringContaining('backup locked'), removed: [{ id: 4 }] });
  });
});
