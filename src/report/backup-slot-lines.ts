import type { ReportResult } from './report.js';

const WHY = { room: 'to make room', judged: 'its writes judged healthy', keep: 'beyond keep' } as const;

/**
 * What a backup step did to its environment's manual slots, in words every sink can show (each makes
 * the tags safe for itself: a tag a person typed in the dashboard is service text):
 * `removed backups 600 (sitefleet-before-php-2026-10-20, to make room), 1004 (…, its writes judged healthy); kept 1005`.
 */
export function backupSlotsText(r: Pick<ReportResult, 'backup_slots'>): string | undefined {
  const slots = r.backup_slots;
  if (!slots || (slots.removed.length === 0 && slots.kept === undefined)) return undefined;
  const removed = slots.removed.map((b) => `${b.id} (${b.tag}, ${WHY[b.why]})`).join(', ');
  const parts = [
    slots.removed.length > 0 ? `removed backups ${removed}` : 'removed no backup',
    ...(slots.kept ? [`kept ${slots.kept.join(', ') || 'none'}`] : []),
  ];
  return parts.join('; ');
}

/**
 * The terminal's one line on manual slots over a whole run: how many backups sitefleet removed, and
 * why, on how many environments (each backup's id and tag is in the report and the CI formats).
 */
export function backupSlotsSummary(results: readonly Pick<ReportResult, 'backup_slots'>[]): string | undefined {
  const removed = results.flatMap((r) => r.backup_slots?.removed ?? []);
  if (removed.length === 0) return undefined;
  const envs = results.filter((r) => (r.backup_slots?.removed.length ?? 0) > 0).length;
  const by = (Object.keys(WHY) as (keyof typeof WHY)[]).flatMap((why) => {
    const n = removed.filter((b) => b.why === why).length;
    return n > 0 ? [`${n} ${WHY[why]}`] : [];
  });
  return `removed ${removed.length} backup${removed.length === 1 ? '' : 's'} sitefleet made on ${envs} environment${envs === 1 ? '' : 's'} (${by.join(', ')}); none a person took (ids and tags in the report)`;
}
