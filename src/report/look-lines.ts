import { isHeldBefore } from '../run/types.js';
import type { Report, ReportResult } from './report.js';

/**
 * Per task whose guarded writes were all held before the write (no page seen healthy: `unseen`,
 * `broken_before`) with none sent: one line saying what to check, in every summary. A night like
 * that is most often a `health.url` that reaches no site (a wrong template, DNS), which would
 * otherwise read as many sites each down on its own. The exit code already says it (a held step is a
 * problem, and counts against the budget). Plain text: each sink makes it safe for itself.
 */
export function nothingSeenLines(report: Report): string[] {
  const lines: string[] = [];
  for (const task of new Set(report.results.map((r) => r.task))) {
    const writes = report.results.filter((r) => r.task === task && r.step_id !== null && r.role !== 'backup');
    // A write held for want of a backup slot (no_backup_slot) was not looked at: its own line says so.
    const held = writes.filter((r) => isHeldBefore(r) && r.held?.code !== 'no_backup_slot');
    if (held.length === 0 || writes.some((r) => r.attempts > 0)) continue;
    const { url, before } = held[0]!.health!;
    lines.push(
      `no page could be seen before its write (${task}, ${held.length} held): check health.url (${url}: ${before ?? 'no answer'}), DNS and the sites' answers; nothing was updated`,
    );
  }
  return lines;
}

/**
 * The page cache clears the service refused as missing (404, 405: `not available`), said once for the
 * run however many environments answered so: the looks went on without them. Undefined when none.
 */
export function cacheNotAvailableLine(report: Report): string | undefined {
  const missing = report.results.flatMap((r: ReportResult) => [r.health?.cache, r.restored?.health?.cache]).filter((c) => c?.outcome === 'not available');
  if (missing.length === 0) return undefined;
  const n = missing.length;
  return `page cache clear not available (${missing[0]!.detail ?? 'refused as missing'}) for ${n} look${n === 1 ? '' : 's'}: each went on without it (health.clear_cache: false stops asking)`;
}
