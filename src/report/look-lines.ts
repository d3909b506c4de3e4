import { isHeldBefore } from '../run/types.js';
import type { Report } from './report.js';

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
    const held = writes.filter(isHeldBefore);
    if (held.length === 0 || writes.some((r) => r.attempts > 0)) continue;
    const { url, before } = held[0]!.health!;
    lines.push(
      `no page could be seen before its write (${task}, ${held.length} held): check health.url (${url}: ${before ?? 'no answer'}), DNS and the sites' answers; nothing was updated`,
    );
  }
  return lines;
}
