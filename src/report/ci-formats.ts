import { clip, forAnnotation, forAnnotationProperty, forMarkdown, forXml, MESSAGE_WIDTH, NAME_WIDTH, shellQuote } from '../util/safe-text.js';
import { backupSlotsText } from './backup-slot-lines.js';
import { groupOf, taskCounts } from './task-counts.js';
export { groupOf };
import { countsAgainstBudget, isProblem, problemCount } from '../run/types.js';
import { problemSites, siteText } from './site-problems.js';
import { answerLines } from './answer-lines.js';
import { changedLines, moreChangedLine } from './changed.js';
import { bypassLines } from './staging-lines.js';
import { isolatedResults, isolationLine } from './isolation-lines.js';
import { cacheNotAvailableLine, nothingSeenLines } from './look-lines.js';
import {
  healthCounts,
  pagesNotLookedAt,
  restoreLine,
  restorePointsOfFailures,
  targetLabel,
  unhealthyBefore,
  type Report,
  type ReportResult,
} from './report.js';

/**
 * JUnit XML, as CI systems read it: one test suite per task, one test case per step; `failed` and
 * `unknown` are failures, `skipped` is skipped, each with its reason as the message.
 */
export function junitXml(report: Report): string {
  const tasks = [...new Set(report.results.map(groupOf))];
  const suites = tasks.map((task) => {
    const rs = report.results.filter((r) => groupOf(r) === task);
    const failures = rs.filter((r) => isProblem(r.status)).length;
    const skipped = rs.filter((r) => r.status === 'skipped').length;
    const cases = rs.map((r) => {
      const name = `${targetLabel(r)}${r.step_id ? ` (${r.step_id})` : ''}`;
      const message = forXml(r.reason ?? r.error ?? r.status);
      const verdict = isProblem(r.status)
        ? `<failure type="${r.status}" message="${message}">${forXml(`${r.request ? `${r.request.method} ${r.request.path}` : ''} ${r.error ?? ''}`.trim())}</failure>`
        : r.status === 'skipped'
          ? `<skipped message="${message}"/>`
          : '';
      const out = guardText(r);
      const body = `${verdict}${out ? `<system-out>${forXml(out)}</system-out>` : ''}`;
      return `    <testcase classname="${forXml(`${report.name}.${task}`)}" name="${forXml(name)}">${body}</testcase>`;
    });
    return [
      `  <testsuite name="${forXml(task)}" tests="${rs.length}" failures="${failures}" errors="0" skipped="${skipped}">`,
      ...cases,
      '  </testsuite>',
    ].join('\n');
  });
  const s = report.summary;
  return [
    '<?xml version="1.0" encoding="UTF-8"?>',
    `<testsuites name="${forXml(`sitefleet ${report.name}`)}" tests="${s.total}" failures="${problemCount(s)}" skipped="${s.skipped}">`,
    ...suites,
    '</testsuites>',
    '',
  ].join('\n');
}

/** A step's health outcome and restore point, in a line: `health: healthy (before HTTP 200, after HTTP 200); restore point: backup 1234 (tag …)`. */
export function guardText(r: ReportResult): string {
  const parts: string[] = [];
  if (r.health) {
    const seen = [r.health.before ? `before ${r.health.before}` : '', r.health.after ? `after ${r.health.after}` : ''].filter(Boolean).join(', ');
    parts.push(`health: ${r.health.outcome}${seen ? ` (${seen})` : ''} at ${r.health.url}`);
  }
  if (r.restore_point && r.role !== 'backup') parts.push(restoreLine({ ...r, restore_point: r.restore_point }));
  const slots = backupSlotsText(r);
  if (slots) parts.push(slots);
  const isolated = r.role === 'backup' ? undefined : isolationLine(r);
  if (isolated) parts.push(isolated);
  return parts.join('; ');
}

/** Updated items a Markdown summary names (the run's page lists every one, with its sites). */
const LISTED_CHANGES = 50;

/** The failed, held and unknown steps, each site once (with how many more steps there it stands for), at most 50 sites. */
function problemLines(report: Report): string[] {
  const steps = report.results.filter((r) => isProblem(r.status)).length;
  if (steps === 0) return [];
  const sites = problemSites(report);
  const lines = ['', `**${steps} failed, held or unknown:**`, ''];
  for (const site of sites.slice(0, 50)) {
    const r = site.lead;
    lines.push(`- ${r.status} ${forMarkdown(clip(targetLabel(r), NAME_WIDTH))} (${forMarkdown(r.task)}): ${forMarkdown(siteText(site, MESSAGE_WIDTH))}`);
  }
  if (sites.length > 50) lines.push(`- … and ${sites.length - 50} more sites in the report`);
  return lines;
}

/** Markdown for a CI job summary: what the run updated, a table per task, the failed and unknown steps, and the command that continues the work. */
export function markdownSummary(report: Report, reportPath: string): string {
  const lines = [`### sitefleet: ${forMarkdown(report.name)}${report.mode === 'dry-run' ? ' (dry run)' : ''}`, ''];
  lines.push('| task | targets | ok | failed | held | unknown | skipped | health |', '| --- | ---: | ---: | ---: | ---: | ---: | ---: | --- |');
  for (const { task, counts: c } of taskCounts(report.results)) {
    const rs = report.results.filter((r) => groupOf(r) === task);
    lines.push(
      `| ${forMarkdown(task)} | ${rs.length} | ${c.accepted + c.succeeded} | ${c.failed} | ${c.held} | ${c.unknown} | ${c.skipped} | ${forMarkdown(healthCounts(rs) || '-')} |`,
    );
  }
  const changed = changedLines(report, LISTED_CHANGES);
  if (changed.lines.length > 0) lines.push('', '**Updated:**', '', ...changed.lines.map((line) => `- ${forMarkdown(clip(line, MESSAGE_WIDTH))}`));
  if (changed.more > 0) lines.push(`- ${moreChangedLine(changed.more)}`);
  lines.push(...problemLines(report));
  const answers = answerLines(report);
  if (answers.length > 0) lines.push('', ...answers.map((line) => `- ${forMarkdown(clip(line, MESSAGE_WIDTH))}`));
  const bypassed = bypassLines(report.results);
  if (bypassed.length > 0) lines.push('', ...bypassed.map((line) => `- ${forMarkdown(clip(line, MESSAGE_WIDTH))}`));
  const unseen = pagesNotLookedAt(report);
  if (unseen) lines.push('', `**${forMarkdown(unseen)}**`);
  const noCache = cacheNotAvailableLine(report);
  if (noCache) lines.push('', forMarkdown(clip(noCache, 2 * MESSAGE_WIDTH)));
  for (const line of nothingSeenLines(report)) lines.push('', `**${forMarkdown(clip(line, 2 * MESSAGE_WIDTH))}**`);
  const before = unhealthyBefore(report);
  if (before.length > 0) {
    lines.push('', `**${before.length} broken before their write (not blamed on it):**`, '');
    for (const r of before.slice(0, 50))
      lines.push(`- ${forMarkdown(clip(targetLabel(r), NAME_WIDTH))}: ${forMarkdown(clip(`${r.health!.before ?? ''} at ${r.health!.url}`, MESSAGE_WIDTH))}`);
  }
  if (report.stopped) lines.push('', `Run stopped: ${forMarkdown(report.stopped.reason)}`);
  const next = continueCommand(report, reportPath);
  if (next) lines.push('', `Continue with: \`${next}\``);
  const restore = restorePointsOfFailures(report);
  if (restore.length > 0) {
    lines.push('', `**The failed steps' sites: restored, or their restore points:**`, '');
    for (const r of restore)
      lines.push(`- ${forMarkdown(clip(targetLabel(r), NAME_WIDTH))} (${forMarkdown(r.task)}): ${forMarkdown(clip(restoreLine(r), MESSAGE_WIDTH))}`);
  }
  const isolated = isolatedResults(report.results);
  if (isolated.length > 0) {
    lines.push('', `**Isolated: the update that broke the site, found by sending them again (${isolated.length}):**`, '');
    for (const r of isolated)
      lines.push(`- ${forMarkdown(clip(targetLabel(r), NAME_WIDTH))} (${forMarkdown(r.task)}): ${forMarkdown(isolationLine(r, next) ?? '')}`);
  }
  lines.push('', `Report: \`${reportPath}\``, '');
  return lines.join('\n');
}

/** The command that carries on where a report leaves off, as data: what it does, and its words. */
export interface NextCommand {
  /** `restore`: follow restores accepted and not seen to end; `resume`: send steps never accepted; `status`: follow accepted operations. */
  kind: 'restore' | 'resume' | 'status';
  /** Its arguments after `sitefleet`, unquoted: each sink quotes them for its medium. */
  argv: string[];
}

/**
 * The command that carries on where this report leaves off, if anything is left. After a crossed
 * failure budget, a plain resume would count the same failures and stop at once: it allows the
 * failures seen so far (the most in one task), so it stops again at the next one.
 */
export function nextCommand(report: Report, path: string): NextCommand | undefined {
  if (report.mode !== 'run') return undefined;
  // A site being restored comes first: it is broken until its restore ends (resume may stop on the budget before it looks).
  if (report.results.some((r) => r.restored?.status === 'accepted')) return { kind: 'restore', argv: ['restore', path] };
  // A life cut short (isolation rounds left, a look the halt kept from happening): resume finishes it before anything new.
  const cut = report.results.some((r) => r.isolation?.outcome === 'isolating' || r.held?.code === 'not_looked');
  if (cut || report.results.some((r) => r.step_id !== null && r.status === 'skipped'))
    return { kind: 'resume', argv: ['resume', path, ...(report.stopped?.kind === 'budget' ? ['--max-failures', String(failuresPerTask(report))] : [])] };
  if (report.results.some((r) => r.status === 'accepted')) return { kind: 'status', argv: ['status', path, '--wait'] };
  return undefined;
}

/** A command to type: every sink that offers it (terminal, Markdown, webhooks, pages) gets its words quoted for a shell. */
export function commandText(next: NextCommand): string {
  return ['sitefleet', ...next.argv.map(shellQuote)].join(' ');
}

/** nextCommand as the words to type, or undefined. */
export function continueCommand(report: Report, path: string): string | undefined {
  const next = nextCommand(report, path);
  return next && commandText(next);
}

/**
 * The most steps counted against a budget in any one task (restore points not counted apart: a
 * failed backup is its target's failure); a held step does not count, unless its task said fail_on_hold.
 */
function failuresPerTask(report: Report): number {
  const counts = new Map<string, number>();
  for (const r of report.results) if (countsAgainstBudget(r.status, r.held?.counts_against_budget === true)) counts.set(r.task, (counts.get(r.task) ?? 0) + 1);
  return Math.max(0, ...counts.values());
}

/**
 * GitHub Actions workflow commands: one annotation per problem step (at most 50), `::error` for a
 * failed or unknown step, `::warning` for a held one (the write happened and the site answers).
 */
export function githubAnnotations(report: Report): string[] {
  return report.results
    .filter((r) => isProblem(r.status))
    .slice(0, 50)
    .map((r) => {
      const restored = r.restored && r.restore_point ? `; ${clip(restoreLine({ ...r, restore_point: r.restore_point }), MESSAGE_WIDTH)}` : '';
      const isolated = isolationLine(r);
      const message = `${r.status} ${clip(targetLabel(r), NAME_WIDTH)}: ${clip(r.reason ?? r.error ?? '', MESSAGE_WIDTH)}${restored}${isolated ? `; ${clip(isolated, MESSAGE_WIDTH)}` : ''}`;
      return `::${r.status === 'held' ? 'warning' : 'error'} title=${forAnnotationProperty(`sitefleet ${report.name}: ${r.task}`)}::${forAnnotation(message)}`;
    });
}
