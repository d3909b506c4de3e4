import { clip, forAnnotation, forAnnotationProperty, forMarkdown, forXml, MESSAGE_WIDTH, NAME_WIDTH } from '../util/safe-text.js';
import type { Report, ReportResult } from './report.js';

/** Where a step acted, in a few words: `acme/live`, a domain, a site id, the company. */
export function targetLabel(r: ReportResult): string {
  return r.target.domain ?? (r.target.site ? `${r.target.site}/${r.target.environment}` : (r.target.site_id ?? r.target.company ?? 'company'));
}

/**
 * JUnit XML, as CI systems read it: one test suite per task, one test case per step; `failed` and
 * `unknown` are failures, `skipped` is skipped, each with its reason as the message.
 */
export function junitXml(report: Report): string {
  const tasks = [...new Set(report.results.map((r) => r.task))];
  const suites = tasks.map((task) => {
    const rs = report.results.filter((r) => r.task === task);
    const failures = rs.filter((r) => r.status === 'failed' || r.status === 'unknown').length;
    const skipped = rs.filter((r) => r.status === 'skipped').length;
    const cases = rs.map((r) => {
      const name = `${targetLabel(r)}${r.step_id ? ` (${r.step_id})` : ''}`;
      const message = forXml(r.reason ?? r.error ?? r.status);
      const body =
        r.status === 'failed' || r.status === 'unknown'
          ? `<failure type="${r.status}" message="${message}">${forXml(`${r.request ? `${r.request.method} ${r.request.path}` : ''} ${r.error ?? ''}`.trim())}</failure>`
          : r.status === 'skipped'
            ? `<skipped message="${message}"/>`
            : '';
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

/** Markdown for a CI job summary: a table per task, the failed and unknown steps, and the command that continues the work. */
export function markdownSummary(report: Report, reportPath: string): string {
  const tasks = [...new Set(report.results.map((r) => r.task))];
  const lines = [`### sitefleet: ${forMarkdown(report.name)}${report.mode === 'dry-run' ? ' (dry run)' : ''}`, ''];
  lines.push('| task | targets | ok | failed | unknown | skipped |', '| --- | ---: | ---: | ---: | ---: | ---: |');
  for (const task of tasks) {
    const rs = report.results.filter((r) => r.task === task);
    const n = (...statuses: string[]) => rs.filter((r) => statuses.includes(r.status)).length;
    lines.push(`| ${forMarkdown(task)} | ${rs.length} | ${n('accepted', 'succeeded')} | ${n('failed')} | ${n('unknown')} | ${n('skipped')} |`);
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
  if (report.stopped) lines.push('', `Run stopped: ${forMarkdown(report.stopped.reason)}`);
  const next = continueCommand(report, reportPath);
  if (next) lines.push('', `Continue with: \`${next}\``);
  lines.push('', `Report: \`${reportPath}\``, '');
  return lines.join('\n');
}

/** The command that carries on where this report leaves off, if anything is left. */
export function continueCommand(report: Report, reportPath: string): string | undefined {
  if (report.mode !== 'run') return undefined;
  if (report.results.some((r) => r.step_id !== null && r.status === 'skipped')) return `sitefleet resume ${reportPath}`;
  if (report.results.some((r) => r.status === 'accepted')) return `sitefleet status ${reportPath} --wait`;
  return undefined;
}

/** GitHub Actions workflow commands: one `::error` annotation per failed or unknown step (at most 50). */
export function githubAnnotations(report: Report): string[] {
  return report.results
    .filter((r) => r.status === 'failed' || r.status === 'unknown')
    .slice(0, 50)
    .map(
      (r) =>
        `::error title=${forAnnotationProperty(`sitefleet ${report.name}: ${r.task}`)}::${forAnnotation(`${r.status} ${clip(targetLabel(r), NAME_WIDTH)}: ${clip(r.reason ?? r.error ?? '', MESSAGE_WIDTH)}`)}`,
    );
}
