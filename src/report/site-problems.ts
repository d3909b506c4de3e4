import { isProblem } from '../run/types.js';
import { clip } from '../util/safe-text.js';
import { targetLabel, type Report, type ReportResult } from './report.js';

/** A site's problems in one task: the one that says what happened, and the others on the same site. */
export interface SiteProblems<R extends ReportResult = ReportResult> {
  lead: R;
  others: R[];
}

/**
 * Which of a site's results says what happened, first: the write whose site was restored, then the
 * one whose check found it broken, then the order of the report. The others on that site (writes the
 * restore took back with it) follow from it.
 */
function leadRank(r: ReportResult): number {
  if (r.restored) return 0;
  if (r.health?.outcome === 'unhealthy') return 1;
  return 2;
}

/**
 * `results` grouped by status, site and task, in the order each group first appears: a person reads
 * each failed site once, not once per item updated there (three plugin writes on one site that one
 * restore took back are one site that broke).
 */
export function bySite<R extends ReportResult>(results: readonly R[]): SiteProblems<R>[] {
  const groups = new Map<string, R[]>();
  for (const r of results) {
    const key = JSON.stringify([r.status, targetLabel(r), r.task]);
    groups.set(key, [...(groups.get(key) ?? []), r]);
  }
  return [...groups.values()].map((group) => {
    const [lead, ...others] = [...group].sort((a, b) => leadRank(a) - leadRank(b));
    return { lead: lead!, others };
  });
}

/** The report's problems (failed, held, unknown), one group per site and task. */
export function problemSites(report: Report): SiteProblems[] {
  return bySite(report.results.filter((r) => isProblem(r.status)));
}

/** What the other steps on a site were, in a few words: the reason they share, or how many they are. */
export function othersNote(others: readonly ReportResult[]): string {
  if (others.length === 0) return '';
  const reasons = new Set(others.map((r) => r.reason ?? r.error ?? ''));
  const steps = `${others.length} more step${others.length === 1 ? '' : 's'} on this site`;
  return reasons.size === 1 && [...reasons][0] !== '' ? ` (and ${steps}: ${[...reasons][0]})` : ` (and ${steps}, in the report)`;
}

/**
 * A site's line within `width` characters: its lead's reason, then what its other steps were. The
 * reason is what gives way (a PHP fatal error runs long): a line that stands for several steps says so.
 */
export function siteText({ lead, others }: SiteProblems, width: number): string {
  const note = clip(othersNote(others), Math.floor(width / 2));
  return `${clip(lead.reason ?? lead.error ?? '', width - note.length)}${note}`;
}
