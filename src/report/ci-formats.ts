import { clip, forAnnotation, forAnnotationProperty, forMarkdown, forXml, MESSAGE_WIDTH, NAME_WIDTH, shellQuote } from '../util/safe-text.js';
import { answerLines } from './answer-lines.js';
import { healthCounts, restoreLine, restorePointsOfFailures, targetLabel, unhealthyBefore, type Report, type ReportResult } from './report.js';

/** The row (or test suite) a result is counted in: a task's restore points apart from its writes, so targets are counted once. */
export function groupOf(r: ReportResult): string {
  return r.role === 'backup' ? `${r.task}: backups first` : r.task;
}

/**
 * JUnit XML, as CI systems read it: one test suite per task, one test case per step; `failed` and
 * `unknown` are failures, `skipped` is skipped, each with its reason as the message.
 */
export function junitXml(report: Report): string {
  const tasks = [...new Set(report.results.map(groupOf))];
  const suites = tasks.map((task) => {
    const rs = report.results.filter((r) => groupOf(r) === task);
    const failures = rs.filter((r) => r.status === 'failed' || r.status === 'unknown').length;
    const skipped = rs.filter((r) => r.status === 'skipped').length;
    const cases = rs.map((r) => {
      const name = `${targetLabel(r)}${r.step_id ? ` (${r.step_id})` : ''}`;
      const message = forXml(r.reason ?? r.error ?? r.status);
      const verdict =
        r.status === 'failed' || r.status === 'unknown'
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
    `<testsuites name="${forXml(`sitefleet ${report.name}`)}" tests="${s.total}" failures="${s.failed + s.unknown}" skipped="${s.skipped}">`,
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
  return parts.join('; ');
}

/** Markdown for a CI job summary: a table per task, the failed and unknown steps, and the command that continues the work. */
export function markdownSummary(report: Report, reportPath: string): string {
  const tasks = [...new Set(report.results.map(groupOf))];
  const lines = [`### sitefleet: ${forMarkdown(report.name)}${report.mode === 'dry-run' ? ' (dry run)' : ''}`, ''];
  lines.push('| task | targets | ok | failed | unknown | skipped | health |', '| --- | ---: | ---: | ---: | ---: | ---: | --- |');
  for (const task of tasks) {
    const rs = report.results.filter((r) => groupOf(r) === task);
    const n = (...statuses: string[]) => rs.filter((r) => statuses.includes(r.status)).length;
    lines.push(
      `| ${forMarkdown(task)} | ${rs.length} | ${n('accepted', 'succeeded')} | ${n('failed')} | ${n('unknown')} | ${n('skipped')} | ${forMarkdown(healthCounts(rs) || '-')} |`,
    );
  }
  const problems = report.results.filter((r) => r.status === 'failed' || r.status === 'unknown');
  if (problems.length > 0) {
    lines.push('', `**${problems.length} failed or unknown:**`, '');
    for (const r of problems.slice(0, 50))
      lines.push(
        `- ${r.status} ${forMarkdown(clip(targetLabel(r), NAME_WIDTH))} (${forMarkdown(r.task)}): ${forMarkdown(clip(r.reason ?? r.error ?? '', MESSAGE_WIDTH))}`,
      );
    if (problems.length > 50) lines.push(`- … and ${problems.length - 50} more in the report`);
  }
  const answers = answerLines(report);
  if (answers.length > 0) lines.push('', ...answers.map((line) => `- ${forMarkdown(clip(line, MESSAGE_WIDTH))}`));
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
  lines.push('', `Report: \`${reportPath}\``, '');
  return lines.join('\n');
}

/**
 * The command that carries on where this report leaves off, if anything is left. After a crossed
 * failure budget, a plain resume would count the same failures and stop at once: it allows the
 * failures seen so far (the most in one task), so it stops again at the next one.
 */
export function continueCommand(report: Report, path: string): string | undefined {
  if (report.mode !== 'run') return undefined;
  // A command to type: every sink that offers it (terminal, Markdown, webhooks, pages) gets the path quoted for a shell.
  const reportPath = shellQuote(path);
  // A site being restored comes first: it is broken until its restore ends (resume may stop on the budget before it looks).
  if (report.results.some((r) => r.restored?.status === 'accepted')) return `sitefleet restore ${reportPath}`;
  if (report.results.some((r) => r.step_id !== null && r.status === 'skipped'))
    return `sitefleet resume ${reportPath}${report.stopped?.kind === 'budget' ? ` --max-failures ${failuresPerTask(report)}` : ''}`;
  if (report.results.some((r) => r.status === 'accepted')) return `sitefleet status ${reportPath} --wait`;
  return undefined;
}

/** The most failed or unknown steps in any one task (restore points not counted apart: a failed backup is its target's failure). */
function failuresPerTask(report: Report): number {
  const counts = new Map<string, number>();
  for (const r of report.results) if (r.status === 'failed' || r.status === 'unknown') counts.set(r.task, (counts.get(r.task) ?? 0) + 1);
  return Math.max(0, ...counts.values());
}

/** GitHub Actions workflow commands: one `::error` annotation per failed or unknown step (at most 50). */
export function githubAnnotations(report: Report): string[] {
  return report.results
    .filter((r) => r.status === 'failed' || r.status === 'unknown')
    .slice(0, 50)
    .map(
      (r) =>
        `::error title=${forAnnotationProperty(`sitefleet ${report.name}: ${r.task}`)}::${forAnnotation(`${r.status} ${clip(targetLabel(r), NAME_WIDTH)}: ${clip(r.reason ?? r.error ?? '', MESSAGE_WIDTH)}${r.restored && r.restore_point ? `; ${clip(restoreLine({ ...r, restore_point: r.restore_point }), MESSAGE_WIDTH)}` : ''}`)}`,
    );
}
