import { refFrom } from '../inventory/kinds.js';
import { releaseAgeGroups } from '../report/release-age-lines.js';
import { stagingGroups } from '../report/staging-lines.js';
import { withheldGroups } from '../report/withheld-lines.js';
import { quarantinedVersions } from '../report/quarantined.js';
import { exitMeaning } from '../errors.js';
import { taskCounts } from '../report/task-counts.js';
import { isProblem } from '../run/types.js';
import { changedGroups } from '../report/changed.js';
import { culpritLog, isolatedResults, isolationFacts, isolationLine } from '../report/isolation-lines.js';
import { commandText, nextCommand } from '../report/ci-formats.js';
import { restoreLine, targetLabel, type Report, type ReportResult, type Summary } from '../report/report.js';

/** A run as a channel tells of it: with its report, or (an error ended the command first) with the error alone. */
export interface RunEnd {
  /** The playbook's name. */
  name: string;
  company?: string;
  runId?: string;
  exitCode: number;
  startedAt: Date;
  finishedAt: Date;
  report?: { value: Report; path: string };
  /** What ended a run that wrote no report. */
  error?: string;
  /** How often the service answered 429 during this command. */
  rateLimited?: number;
}

export { exitMeaning };

/** The failed and unknown steps (restore points taken apart from their writes are counted with them, as the summary does). */
export function problemsOf(report: Report): ReportResult[] {
  return report.results.filter((r) => isProblem(r.status));
}

/** One problem step as a receiver reads it: where, what, why, and the backup to restore from. */
export function problemEntry(r: ReportResult) {
  return {
    task: r.task,
    status: r.status,
    target: targetLabel(r),
    site: r.target.site ?? null,
    environment: r.target.environment ?? null,
    reason: r.reason ?? r.error ?? null,
    restore_point: r.restore_point ?? null,
    // Restored already (or tried): a receiver must not be told to restore a site that was put back.
    restored: r.restored ?? null,
    // Put back by its items' own files (health.undo: items_first): the site's data kept, no backup restored unless `restored` says so.
    undone: r.undone ?? null,
    what_became_of_the_site: r.restore_point ? restoreLine({ ...r, restore_point: r.restore_point }) : null,
    // A held step's reason as data: its code, how much changed, its diff image, and what overrides it.
    held: r.held ?? null,
  };
}

/** One site `health.on_broken: isolate` took apart (or whose error log named an item), as a receiver reads it. */
export function isolatedEntry(r: ReportResult, next?: string) {
  const facts = r.isolation ? isolationFacts(r.isolation) : undefined;
  return {
    task: r.task,
    target: targetLabel(r),
    site: r.target.site ?? null,
    environment: r.target.environment ?? null,
    outcome: r.isolation?.outcome ?? null,
    culprits: facts?.culprits ?? [],
    kept: facts?.kept ?? [],
    left: facts?.left ?? [],
    restores: r.isolation?.restores ?? null,
    reason: r.isolation?.reason ?? null,
    logged: culpritLog(r.isolation, r.logged) ?? null,
    words: isolationLine(r, next) ?? null,
  };
}

/** At most this many problem steps in a message; the rest are counted, and the report has them all. */
export const LISTED = 20;

/** The JSON summary a `format: json` webhook posts; `sent_at` lets a receiver refuse a replay. */
export function jsonSummary(end: RunEnd, sentAt: Date): Record<string, unknown> {
  const report = end.report?.value;
  const problems = report ? problemsOf(report) : [];
  const next = report && end.report ? nextCommand(report, end.report.path) : undefined;
  return {
    event: 'sitefleet.run.end',
    sent_at: sentAt.toISOString(),
    playbook: end.name,
    company: end.company ?? null,
    run_id: end.runId ?? null,
    exit_code: end.exitCode,
    exit_meaning: exitMeaning(end.exitCode),
    error: end.error ?? null,
    stopped: report?.stopped ?? null,
    started_at: end.startedAt.toISOString(),
    finished_at: end.finishedAt.toISOString(),
    duration_seconds: Math.round((end.finishedAt.getTime() - end.startedAt.getTime()) / 100) / 10,
    summary: report?.summary ?? null,
    tasks: report ? taskCounts(report.results) : [],
    // What the run changed (report/changed.ts): each item's versions once, with where the update stands.
    changed: report ? changedGroups(report).slice(0, LISTED) : [],
    problems: problems.slice(0, LISTED).map(problemEntry),
    problems_not_listed: Math.max(0, problems.length - LISTED),
    // Held updates are not problems: listed apart, each item version once with its code and dates.
    release_age: report
      ? releaseAgeGroups(report.results)
          .slice(0, LISTED)
          .map(({ task, decision, environments }) => ({ task, ...decision, environments }))
      : [],
    // Staging first, folded by code and item version: how many sites each stands for, with dates and override.
    staging: report
      ? stagingGroups(report.results)
          .slice(0, LISTED)
          .map(({ task, decision: d, sites }) => ({
            task,
            code: d.code,
            ...refFrom(d),
            version: d.version,
            until: d.until ?? null,
            override: d.override ?? null,
            sites,
          }))
      : [],
    // health.on_broken: isolate, site by site: the records as they are (the log line exact: a receiver escapes it for its own sink), and the words.
    isolated: report
      ? isolatedResults(report.results)
          .slice(0, LISTED)
          .map((r) => isolatedEntry(r, next && commandText(next)))
      : [],
    // The versions this run found to break a site, each once: the company's later runs leave them alone until released.
    quarantined: report
      ? quarantinedVersions(report.quarantined)
          .slice(0, LISTED)
          .map(({ first, environments, override }) => ({ ...first, environments, override }))
      : [],
    // What the company's history left alone (a quarantined version, a write waiting its backoff): each once, with its override.
    withheld: report
      ? withheldGroups(report.results)
          .slice(0, LISTED)
          .map(({ task, decision, environments }) => ({ task, ...decision, environments }))
      : [],
    continue_with: (next && commandText(next)) ?? null,
    next_command: next ?? null,
    report: end.report?.path ?? null,
  };
}

/** `12 succeeded, 2 failed, 1 unknown`: the counts that are not zero. */
export function countsText(summary: Summary): string {
  const parts = (['succeeded', 'accepted', 'failed', 'held', 'unknown', 'skipped', 'planned'] as const)
    .filter((s) => (summary[s] ?? 0) > 0)
    .map((s) => `${summary[s]} ${s}`);
  return parts.length ? parts.join(', ') : 'nothing to do';
}
