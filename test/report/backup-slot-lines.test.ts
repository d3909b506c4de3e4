import { describe, expect, it } from 'vitest';
import { backupSlotsSummary, backupSlotsText } from '../../src/report/backup-slot-lines.js';
import { guardText } from '../../src/report/ci-formats.js';
import type { ReportResult } from '../../src/report/report.js';

describe('backup slots in words', () => {
  const removed = [
    { id: 600, tag: 'sitefleet-before-php-2026-10-20', why: 'room' as const },
    { id: 1004, tag: 'sitefleet-before-php-2026-11-27', why: 'judged' as const },
  ];

  it('names each backup removed, why, and what keep kept; nothing when nothing went and no keep', () => {
    expect(backupSlotsText({ backup_slots: { removed } })).toBe(
      'removed backups 600 (sitefleet-before-php-2026-10-20, to make room), 1004 (sitefleet-before-php-2026-11-27, its writes judged healthy)',
    );
    expect(backupSlotsText({ backup_slots: { removed: [], kept: [1005] } })).toBe('removed no backup; kept 1005');
    expect(backupSlotsText({ backup_slots: { removed: [], earlier: [7] } })).toBeUndefined();
    expect(backupSlotsText({})).toBeUndefined();
  });

  it('the JUnit and CI line of a backup step carries it', () => {
    const r = { role: 'backup', status: 'succeeded', backup_slots: { removed: removed.slice(0, 1) } } as unknown as ReportResult;
    expect(guardText(r)).toBe('removed backups 600 (sitefleet-before-php-2026-10-20, to make room)');
  });
});

describe('backupSlotsSummary: one line for the whole run', () => {
  it('counts what sitefleet removed, and why, without a line per environment', () => {
    const results = [
      { backup_slots: { removed: [{ id: 1, tag: 'sitefleet-a', why: 'judged' as const }] } },
      {
        backup_slots: {
          removed: [
            { id: 2, tag: 'sitefleet-a', why: 'judged' as const },
            { id: 3, tag: 'sitefleet-b', why: 'room' as const },
          ],
        },
      },
      {},
    ];
    expect(backupSlotsSummary(results)).toBe(
      'removed 3 backups sitefleet made on 2 environments (1 to make room, 2 its writes judged healthy); none a person took (ids and tags in the report)',
    );
    expect(backupSlotsSummary([{}])).toBeUndefined();
  });

  it('counts those removed for isolation rounds too, and an environment once for its backup step and its write', () => {
    const room = [{ id: 4, tag: 'sitefleet-c', why: 'room' as const }];
    const results = [
      { target: { env_id: 'e1' }, backup_slots: { removed: [{ id: 3, tag: 'sitefleet-b', why: 'room' as const }] } },
      { target: { env_id: 'e1' }, isolation: { rounds: [{}, { room }] } },
    ];
    expect(backupSlotsSummary(results)).toBe(
      'removed 2 backups sitefleet made on 1 environment (2 to make room); none a person took (ids and tags in the report)',
    );
    expect(backupSlotsText(results[1]!)).toBe('removed backups 4 (sitefleet-c, to make room for isolation round 2)');
  });
});
