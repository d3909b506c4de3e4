import type { IsolationRound } from '../run/types.js';
import type { ReportResult } from './report.js';

const WHY = { room: 'to make room', judged: 'its writes judged healthy', keep: 'beyond keep' } as const;

/** A result as these lines read it: its backup step's slots, and (a write's) its isolation rounds' room. */
type Slotted = Pick<ReportResult, 'backup_slots'> & { target?: { env_id?: string }; isolation?: { rounds: Pick<IsolationRound, 'room'>[] } };

/** Each backup removed for a result, with why in words: a backup step's, and those removed for its isolation rounds' backups. */
function removedFor(r: Slotted): { id: number; tag: string; why: keyof typeof WHY; words: string }[] {
  const own = (r.backup_slots?.removed ?? []).map((b) => ({ ...b, words: WHY[b.why] }));
  const rounds = (r.isolation?.rounds ?? []).flatMap((round, i) =>
    (round.room ?? []).map((b) => ({ ...b, words: `${WHY[b.why]} for isolation round ${i + 1}` })),
  );
  return [...own, ...rounds];
}

/**
 * What a backup step (or a write's isolation rounds) did to its environment's manual slots, in words every sink can show (each makes
 * the tags safe for itself: a tag a person typed in the dashboard is service text):
 * `removed backups 600 (sitefleet-before-php-2026-10-20, to make room), 1004 (…, its writes judged healthy); kept 1005`.
 */
export function backupSlotsText(r: Slotted): string | undefined {
  const removed = removedFor(r);
  const kept = r.backup_slots?.kept;
  if (removed.length === 0 && kept === undefined) return undefined;
  const parts = [
    removed.length > 0 ? `removed backups ${removed.map((b) => `${b.id} (${b.tag}, ${b.words})`).join(', ')}` : 'removed no backup',
    ...(kept ? [`kept ${kept.join(', ') || 'none'}`] : []),
  ];
  return parts.join('; ');
}

/**
 * The terminal's one line on manual slots over a whole run: how many backups sitefleet removed, and
 * why, on how many environments (each backup's id and tag is in the report and the CI formats).
 */
export function backupSlotsSummary(results: readonly Slotted[]): string | undefined {
  const each = results.map((r) => ({ r, removed: removedFor(r) })).filter((x) => x.removed.length > 0);
  const removed = each.flatMap((x) => x.removed);
  if (removed.length === 0) return undefined;
  // A write and its backup step are one environment: counted once.
  const envs = new Set(each.map((x) => x.r.target?.env_id ?? x.r)).size;
  const by = (Object.keys(WHY) as (keyof typeof WHY)[]).flatMap((why) => {
    const n = removed.filter((b) => b.why === why).length;
    return n > 0 ? [`${n} ${WHY[why]}`] : [];
  });
  return `removed ${removed.length} backup${removed.length === 1 ? '' : 's'} sitefleet made on ${envs} environment${envs === 1 ? '' : 's'} (${by.join(', ')}); none a person took (ids and tags in the report)`;
}
