import type { WithheldDecision } from '../inventory/withheld.js';
import type { StagingDecision } from '../plan/staging-first.js';
import { randomUUID } from 'node:crypto';
import { writeOutput, type OutputFile } from '../util/output-file.js';
import { jsonText } from '../util/safe-text.js';
import { EXIT, type ExitCode } from '../errors.js';
import type { Target } from '../actions/action.js';
import type { Plan } from '../plan/plan.js';
import type { ReleaseAgeDecision } from '../inventory/release-age.js';
import {
  isHeldBefore,
  problemCount,
  zeroCounts,
  type ExecuteOutcome,
  type Restored,
  type RestorePoint,
  type StepResult,
  type UndoneByItems,
  type StepStatus,
} from '../run/types.js';
import type { QuarantineBreak } from '../inventory/quarantine-table.js';
import { quarantinedEntries, type QuarantinedEntry } from './quarantined.js';

/** A step's result as the report shows it: with its task, target and request, without its private output (login links). */
export interface ReportResult extends Omit<StepResult, 'step_id' | 'private_output'> {
  /** null for a target the plan skipped (no call was planned). */
  step_id: string | null;
  task: string;
  action: string;
  target: Target;
  request: { method: string; path: string; body?: unknown } | null;
  /**
   * `backup`: the restore point a `backup_first` task took before this environment's write;
   * `staging`: a staging environment's run of the update live takes later (rollout.staging_first).
   */
  role?: 'backup' | 'staging';
  /** The step's rollout wave, for a task with a rollout (the run's page groups its timeline by it). */
  wave?: number;
  /** What the listing showed the call depended on (`astra 4.1.0 → 4.1.1`): what the maintenance record says was done. */
  precondition?: string;
  /** Items (themes, plugins) the release age held back here, or sent before their age, each with its reason code and dates. */
  release_age?: ReleaseAgeDecision[];
  /** Updates the company's history left alone here: a quarantined version, a write waiting its backoff (retry_later). */
  withheld?: WithheldDecision[];
  /** rollout.staging_first: staged, promoted, bypassed, or why live waits (staging_soaking, staging_failed, no_staging), with dates and override. */
  staging?: StagingDecision[];
}

export type Summary = Record<'total' | StepStatus, number>;

/** The run lock a run held, and the Redis it shared it through (an address without credentials), or null. */
export interface RunLock {
  scope: 'company' | 'playbook';
  coordination: string | null;
}

export interface Report {
  version: 1;
  run_id: string;
  playbook: string;
  name: string;
  company: string;
  mode: 'run' | 'dry-run';
  started_at: string;
  finished_at: string;
  stopped: { kind: string; reason: string } | null;
  /** The lock the run held and where it shared it (absent in older reports): what status, resume and restore keep to. */
  lock?: RunLock;
  summary: Summary;
  results: ReportResult[];
  /**
   * The versions this run found to break a site, each environment once, dated when its journal first
   * showed it: quarantined for the company's later runs. Absent when it found none, and from a report
   * that does not say (one written while the run went on, one of an older release): what its results
   * show is then dated by `finished_at` (app/withheld-record.ts `reportBreaks`).
   */
  quarantined?: QuarantinedEntry[];
  /** Messages to the run's channels (ping, webhooks, metrics) that did not get through; absent when every one did. */
  undelivered?: { channel: string; at: 'start' | 'end'; tries: number; error: string }[];
}

/** Where a step acted, in a few words: `acme/live`, a domain, a site id, the company. */
export function targetLabel(r: Pick<ReportResult, 'target'>): string {
  const { domain, site, environment, site_id, company } = r.target;
  // A site-scoped step names its site only (no `acme/undefined`).
  return domain ?? (site ? (environment === undefined ? site : `${site}/${environment}`) : (site_id ?? company ?? 'company'));
}

/** Counts of the results by status. */
export function summarize(results: readonly { status: StepStatus }[]): Summary {
  const summary: Summary = { total: 0, ...zeroCounts() };
  for (const r of results) {
    summary.total++;
    summary[r.status]++;
  }
  return summary;
}

/**
 * Folds a plan and what happened to its steps into the report: one result per planned step, in plan
 * order, then one per target the plan skipped. Login links and other outputs are not copied in.
 */
export function buildReport(args: {
  plan: Plan;
  mode: 'run' | 'dry-run';
  startedAt: Date;
  finishedAt: Date;
  results?: Map<string, StepResult>;
  stopped?: ExecuteOutcome['stopped'];
  runId?: string;
  /** A real run's coordination, as its journal records it (a dry run holds no lock). */
  coordination?: string | null;
  /** What the run's journal shows broke a site, dated (run/write-ends.ts `journalBreaks`): the report's `quarantined`. */
  breaks?: readonly QuarantineBreak[];
}): Report {
  const results: ReportResult[] = [];
  for (const step of args.plan.steps) {
    const r = args.results?.get(step.id);
    const precondition = r?.sent ? r.sent.precondition : step.precondition;
    results.push({
      step_id: step.id,
      task: step.task,
      action: step.action,
      target: step.target,
      // What was sent: the plan's body, unless the run's quarantine left updates out of it (`sent`).
      request: { method: step.method, path: step.path, ...(r?.sent ? { body: r.sent.body } : step.body === undefined ? {} : { body: step.body }) },
      status: r?.status ?? (args.mode === 'dry-run' ? 'planned' : 'skipped'),
      http_status: r?.http_status ?? null,
      operation_id: r?.operation_id ?? null,
      attempts: r?.attempts ?? 0,
      error: r?.error ?? null,
      reason: r?.reason ?? (r ? null : (step.note ?? (args.mode === 'dry-run' ? null : 'not sent'))),
      ...(r?.health ? { health: r.health } : {}),
      ...(r?.restore_point ? { restore_point: r.restore_point } : {}),
      ...(r?.undone ? { undone: r.undone } : {}),
      ...(r?.restored ? { restored: r.restored } : {}),
      ...(r?.isolation ? { isolation: r.isolation } : {}),
      ...(r?.logged ? { logged: r.logged } : {}),
      ...(r?.visual ? { visual: r.visual } : {}),
      ...(r?.held ? { held: r.held } : {}),
      ...(r?.confirmed_by ? { confirmed_by: r.confirmed_by } : {}),
      ...(r?.runs ? { runs: r.runs } : {}),
      ...(r?.failure ? { failure: r.failure } : {}),
      ...(r?.database ? { database: r.database } : {}),
      ...(r?.backup_slots ? { backup_slots: r.backup_slots } : {}),
      ...(r ? answered(r) : {}),
      ...(step.role ? { role: step.role } : {}),
      ...(step.wave !== undefined ? { wave: step.wave } : {}),
      ...(precondition !== undefined ? { precondition } : {}),
      ...(step.release_age ? { release_age: step.release_age } : {}),
      ...(step.withheld ? { withheld: step.withheld } : {}),
      ...(step.staging ? { staging: step.staging } : {}),
    });
  }
  for (const s of args.plan.skipped) results.push(skippedTarget(s));
  return {
    version: 1,
    run_id: args.runId ?? randomUUID(),
    playbook: args.plan.playbook,
    name: args.plan.name,
    company: args.plan.company,
    mode: args.mode,
    started_at: args.startedAt.toISOString(),
    finished_at: args.finishedAt.toISOString(),
    stopped: args.stopped ? { kind: args.stopped.kind, reason: args.stopped.reason } : null,
    ...(args.coordination === undefined ? {} : { lock: { scope: args.plan.settings?.lock ?? 'company', coordination: args.coordination } }),
    summary: summarize(results),
    results,
    ...(args.breaks?.length ? { quarantined: quarantinedEntries(args.breaks) } : {}),
  };
}

/** What the step's answers carried, copied as they are (the private output never is). */
function answered(r: StepResult): Partial<ReportResult> {
  const { operation_data, operation_data_cut, created, output, output_cut } = r;
  return {
    ...(operation_data !== undefined && { operation_data }),
    ...(operation_data_cut && { operation_data_cut }),
    ...(created && { created }),
    ...(output !== undefined && { output }),
    ...(output_cut !== undefined && { output_cut }),
  };
}

/**
 * Writes JSON so that a reader never sees half a file, and a power cut never leaves an empty one, nor
 * through a link (see writeOutput); its strings exact, and safe to `cat` (see jsonText).
 */
export function writeJsonAtomic(output: OutputFile, value: unknown): void {
  writeOutput(output, `${jsonText(value, 2)}\n`);
}

/**
 * Exit codes: 0 everything accepted or succeeded (skips are fine), 1 some failed or unknown,
 * 3 the run stopped (authentication, failure budget), 5 its window closed first, 130 interrupted.
 */
export function exitCodeOf(report: Report): ExitCode {
  if (report.stopped?.kind === 'interrupted') return EXIT.interrupted;
  if (report.stopped?.kind === 'window') return EXIT.window;
  if (report.stopped) return EXIT.stopped;
  return problemCount(report.summary) > 0 ? EXIT.someFailed : EXIT.ok;
}

/** `health:` outcomes of a set of results, counted: `3 healthy, 1 unhealthy before`; empty when none was checked. */
export function healthCounts(results: readonly ReportResult[]): string {
  const counts = new Map<string, number>();
  for (const r of results) if (r.health) counts.set(r.health.outcome, (counts.get(r.health.outcome) ?? 0) + 1);
  return ['healthy', 'unhealthy', 'unhealthy before', 'not checked']
    .filter((o) => counts.has(o))
    .map((o) => `${counts.get(o)} ${o}`)
    .join(', ');
}

/**
 * The pages `health.visual` could not look at (no screenshot before or after the write), and of how
 * many steps: a line of every summary, as their steps are held (visual_unchecked), never passed.
 * Empty (undefined) when every page was looked at.
 */
export function pagesNotLookedAt(report: Report): string | undefined {
  let pages = 0;
  let steps = 0;
  let of = 0;
  for (const r of report.results) {
    const unseen = r.visual?.pages.filter((p) => p.verdict === 'not checked').length ?? 0;
    of += r.visual?.pages.length ?? 0;
    pages += unseen;
    if (unseen > 0) steps++;
  }
  if (pages === 0) return undefined;
  return `pages not looked at (health.visual): ${pages} of ${of}, on ${steps} step${steps === 1 ? '' : 's'}, held (visual_unchecked)`;
}

/**
 * Sites that were broken before their write, and written to all the same (`when_broken_before:
 * update`): not blamed on it, listed so someone looks at them. One held before its write is among the
 * problems already, saying it was not updated.
 */
export function unhealthyBefore(report: Report): ReportResult[] {
  return report.results.filter((r) => r.health?.outcome === 'unhealthy before' && !isHeldBefore(r));
}

/** The failed writes that have a restore point: what someone restores after a broken rollout. */
export function restorePointsOfFailures(report: Report): (ReportResult & { restore_point: RestorePoint })[] {
  return report.results.filter(
    (r): r is ReportResult & { restore_point: RestorePoint } => r.status === 'failed' && r.role !== 'backup' && r.restore_point !== undefined,
  );
}

/** A target the plan skipped: no call, and why. */
function skippedTarget(s: Plan['skipped'][number]): ReportResult {
  return {
    step_id: null,
    task: s.task,
    action: s.action,
    target: s.target,
    request: null,
    status: 'skipped',
    http_status: null,
    operation_id: null,
    attempts: 0,
    error: null,
    reason: s.reason,
    ...(s.release_age ? { release_age: s.release_age } : {}),
    ...(s.withheld ? { withheld: s.withheld } : {}),
    ...(s.staging ? { staging: s.staging } : {}),
  };
}

/**
 * What became of a failed write's site, in words every sink shows: `restored from backup 1234:
 * healthy again`, `could not restore: …`, or its restore point when no restore was asked for.
 */
export function restoreLine(r: ReportResult & { restore_point: RestorePoint }): string {
  const done = r.restored;
  const byItems = r.undone && undoLine(r.undone);
  if (!done) return byItems ?? `restore point: ${restorePointText(r.restore_point)}`;
  const restored = restoredLine(done, r.restore_point.taken_at);
  return byItems ? `${byItems}; ${restored}` : restored;
}

/** What a restore did, saying the loss it brings: whatever the site took since the backup (a shop's orders). */
function restoredLine(done: Restored, takenAt: string | undefined): string {
  const from = `backup ${done.backup_id}`;
  const lost = `(what changed on the site since the backup${takenAt ? ` of ${takenAt.slice(0, 16).replace('T', ' ')} UTC` : ''} is lost)`;
  switch (done.status) {
    case 'succeeded':
      if (done.health?.outcome === 'healthy') return `restored from ${from}: healthy again ${lost}`;
      if (done.health?.outcome === 'unhealthy') return `restored from ${from}, but still broken: ${done.health.detail ?? ''} ${lost}`;
      return `restored from ${from} ${lost}`;
    case 'accepted':
      return `restore from ${from} accepted (operation ${done.operation_id}), not seen to finish: follow it with sitefleet restore`;
    case 'sending':
      return `restore from ${from} being sent`;
    default:
      return `could not restore: ${done.reason ?? done.status}${done.status === 'unknown' ? ' (not sent again)' : ''}`;
  }
}

/**
 * What putting the items back by their own files did (health.undo: items_first): `put back jetpack
 * 3.0.0 (files only; the site's data kept): healthy again`, or why the backup came next.
 */
export function undoLine(undone: UndoneByItems): string | undefined {
  const items = undone.commands.map((c) => `${c.name} ${c.version}`).join(', ');
  const kept = "(files only; the site's data kept)";
  if (undone.status === 'not sent') return `not put back by its items: ${undone.reason ?? 'nothing to put back'}`;
  if (undone.status === 'failed') return `could not put back ${items}: ${undone.reason ?? 'failed'}`;
  if (undone.status === 'sending') return `putting back ${items} ${kept}: not seen to end; resume goes on`;
  if (undone.health?.outcome === 'healthy') return `put back ${items} ${kept}: healthy again`;
  return `put back ${items} ${kept}, but still broken${undone.health?.detail ? `: ${undone.health.detail}` : ''}`;
}

/** `backup 1234 (tag sitefleet-before-…)`, or the tag alone when the list did not show the id. */
export function restorePointText(point: RestorePoint): string {
  return point.backup_id === null ? `backup tagged ${point.tag} (id not read)` : `backup ${point.backup_id} (tag ${point.tag})`;
}
