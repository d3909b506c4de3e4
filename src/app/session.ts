import { forTerminal } from '../util/safe-text.js';
import { sharedStop } from './signals.js';
import type { Plan } from '../plan/plan.js';
import type { Playbook } from '../playbook/types.js';
import { exitCodeOf, type Report } from '../report/report.js';
import { reportFromJournal } from '../report/from-journal.js';
import { journalRecorder } from './run-events/journal-recorder.js';
import { ReportSnapshots } from './run-events/report-snapshots.js';
import { cacheMissingWarning } from './run-events/cache-missing.js';
import { stepLog } from './run-events/step-log.js';
import { fanOut, type Subscriber } from './run-events/subscriber.js';
import { execute, type RunLook } from '../run/executor.js';
import type { BackupSlots, ExecuteOutcome, StepResult } from '../run/types.js';
import type { Journal } from '../run/journal.js';
import type { GlobalOptions, Runtime } from './runtime.js';
import type { RunScope } from './run-scope.js';
import { endsOf, recordStagingOrWarn } from './staging-record.js';
import { recordWithheldOrWarn, reportBreaks, writeEndsOf } from './withheld-record.js';
import { finishRun, type OutputFlags, type Started } from './finish-run.js';
import { SiteProbe } from '../health/http/probe.js';
import { openVisual } from './visual.js';
import { siteUserAgent } from '../util/version.js';
import { closingAt, type Deadline } from './window.js';
import { formatDuration } from '../util/duration.js';
import { wallText } from '../util/time-window.js';

export interface SessionArgs {
  plan: Plan;
  /** What the run holds (coordination, lock, runtime, signals): its runtime is the one the plan was read through. */
  scope: RunScope;
  journal: Journal;
  reportPath: string;
  runId: string;
  startedAt: Date;
  /** Resume: results that stand. */
  initial?: Map<string, StepResult>;
  /** Resume: restore points' room the journal holds. */
  room?: ReadonlyMap<string, BackupSlots>;
  overrideMaxFailures?: number | string;
  /** For writing login links to the files the tasks name (a fresh run only: resume has no playbook). */
  playbook?: Playbook;
  /** The output flags (`--junit`, `--summary-md`): finish-run.ts. */
  flags: OutputFlags;
  /** When the window closes (settings.window, --not-after): no write is sent after it. */
  deadline?: Deadline;
  /** The run's start as its channels were told of it (announceRun): they are told of its end. */
  started?: Started;
  out(text: string): void;
}

/**
 * Resume and status continue a run: one that shared its lock and budget through Redis is continued
 * through it too, or the user is told that this one shares nothing with the other machines.
 */
export function warnIfUncoordinated(recorded: string | undefined, globals: GlobalOptions): void {
  if (recorded && !globals.coordination)
    globals.io.stderr.write(
      `sitefleet: warning: this run was coordinated through ${forTerminal(recorded)}; without --coordination (or SITEFLEET_COORDINATION) this command shares no lock or budget with other machines\n`,
    );
}

/**
 * Executes a plan with everything a real run needs around it, each a subscriber of the executor's
 * events (run-events/): the journal (intent before each send, the answer as soon as it is in), report
 * snapshots, the progress line and the step log; then Ctrl-C handling, and at the end the report
 * rebuilt from the journal itself, private outputs, metrics and CI outputs.
 */
export async function runSession(args: SessionArgs): Promise<{ report: Report; exitCode: number }> {
  const usage = { cpu: process.cpuUsage(), wall: performance.now() };
  // When the run began, for its retries' backoff: its start, or this clock's now if earlier (a clock that is not the wall's).
  const runAt = Math.min(args.startedAt.getTime(), args.scope.globals.io.now());
  if (args.deadline)
    args.out(
      `no write will be sent after ${wallText(args.deadline.at)} (${args.deadline.source}), ${formatDuration((args.deadline.at - Date.now()) / 1000)} from now`,
    );
  const { outcome, snapshots } = await executeWatched(args);
  await args.journal.append({ t: 'end', at: args.scope.globals.io.now() });
  await args.journal.close();
  // The report is rebuilt from the journal: what it says is what a resume would see.
  const report = reportFromJournal(args.journal.path);
  await snapshots.settled(); // a snapshot must not land after the final report
  const { globals } = args.scope;
  await recordStagingOrWarn(args.scope, args.plan.company, endsOf(args.plan, outcome.results));
  await recordWithheldOrWarn(args.scope, {
    company: args.plan.company,
    runId: args.runId,
    ended: writeEndsOf(args.plan, outcome.results),
    runAt,
    breaks: reportBreaks(report),
  });
  const runtime = args.scope.runtime();
  const took = await finishRun({
    report: { flag: 'report', path: args.reportPath, value: report },
    flags: args.flags,
    env: globals.io.env,
    io: globals.io,
    quiet: globals.quiet === true,
    view: globals.view,
    playbook: args.playbook,
    plan: args.plan,
    results: outcome.results,
    after: rateLimitLines(runtime),
    started: args.started,
    rateLimited: runtime.budget.rateLimitedCount + runtime.creation.rateLimitedCount,
  });
  logRunFinished(args, usage, snapshots, took.report ?? 0);
  return { report, exitCode: exitCodeOf(report) };
}

/**
 * The executor at work with the run's subscribers, Ctrl-C and the window's close around it; every
 * one of them is let go when it ends, however it ends.
 */
async function executeWatched(args: SessionArgs): Promise<{ outcome: ExecuteOutcome; snapshots: ReportSnapshots }> {
  const { plan, scope } = args;
  const { globals } = scope;
  const runtime = scope.runtime();
  // Shared by every life's waits (the browser's among them): many listeners at once, each removed as its wait ends.
  const interrupt = sharedStop();
  const halt = sharedStop();
  const restoreSignals = scope.onInterrupt(
    (signal) => {
      runtime.logger.warn({ signal }, 'interrupted: no new writes; the writes already sent finish their lives (again to stop at once)');
      if (!globals.quiet)
        globals.io.stderr.write(
          `\n${signal}: no new writes; finishing the writes already sent (their looks, restores, isolation); press Ctrl-C again to stop at once\n`,
        );
      interrupt.abort();
    },
    () => halt.abort(new Error('interrupted twice')),
  );
  let look: RunLook | undefined;
  const closing = closingAt(args.deadline);
  const snapshots = new ReportSnapshots(plan, args.reportPath, { runId: args.runId, startedAt: args.startedAt, initial: args.initial }, runtime.logger);
  const subscribers = [snapshots, ...watchers(args, { look: () => look, closed: () => closing.signal?.aborted === true })];
  // Sites are fetched only for tasks with health: checks, through their own agent (and proxy), never the API's.
  const sites = plan.tasks.some((t) => t.health) ? new SiteProbe({ userAgent: siteUserAgent(), env: globals.io.env }) : undefined;
  let visual: Awaited<ReturnType<typeof openVisual>>;
  try {
    const warn = (line: string) => globals.io.stderr.write(`sitefleet: warning: ${line}\n`);
    // The browser's waits end with the run's halt, not its first stop: a write already sent is still looked at.
    visual = await openVisual(plan, globals.io.env, args.reportPath, { logger: runtime.logger, signal: halt.signal, warn });
    const outcome = await execute(plan, {
      sites,
      visual: visual?.port,
      caller: runtime.caller,
      logger: runtime.logger,
      overrideMaxFailures: args.overrideMaxFailures,
      signal: interrupt.signal,
      halt,
      closing: closing.signal,
      ...(args.deadline ? { closesAt: { at: args.deadline.at, reason: args.deadline.reason } } : {}),
      lost: runtime.coordination.lost,
      busy: runtime.coordination.busy(plan.company, args.runId),
      tracking: runtime.tracking,
      env: globals.io.env,
      initial: args.initial,
      ...(args.room ? { room: args.room } : {}),
      onEvent: fanOut(subscribers),
      onStart: (run) => void (look = run),
    });
    return { outcome, snapshots };
  } finally {
    for (const s of subscribers) s.end?.();
    restoreSignals();
    closing.dispose();
    await sites?.close();
    await visual?.close();
  }
}

/** The run's other subscribers: the progress line on a terminal, the step log (and its one warning of a missing cache clear), and the journal. */
function watchers(args: SessionArgs, state: { look(): RunLook | undefined; closed(): boolean }): Subscriber[] {
  const { plan, scope } = args;
  const { globals } = scope;
  const runtime = scope.runtime();
  const pending = plan.steps.filter((s) => !args.initial?.has(s.id)).length;
  return [
    globals.view.runLine(pending, new Set(plan.tasks.filter((t) => t.wait).map((t) => t.index)), {
      pausedForMs: () => Math.max(runtime.budget.pausedForMs(), runtime.shared?.pausedForMs() ?? 0),
      nextLookMs: () => state.look()?.nextLookMs(),
      closed: () => state.closed(),
    }),
    stepLog(runtime.logger),
    cacheMissingWarning(runtime.logger),
    // The run's clock, which `quarantine release` and `retry clear` read too: a break is dated by its record.
    journalRecorder(args.journal, () => globals.io.now()),
  ];
}

/** One log line of what the run cost: time, CPU, memory, report writing, and the budgets as they ended. */
function logRunFinished(args: SessionArgs, at: { cpu: NodeJS.CpuUsage; wall: number }, snapshots: ReportSnapshots, finalWriteMs: number): void {
  const runtime = args.scope.runtime();
  const cpu = process.cpuUsage(at.cpu);
  runtime.logger.info(
    {
      steps: args.plan.steps.length,
      wall_ms: Math.round(performance.now() - at.wall),
      cpu_user_ms: Math.round(cpu.user / 1000),
      cpu_system_ms: Math.round(cpu.system / 1000),
      max_rss_mb: Math.round(process.resourceUsage().maxRSS / 1024),
      report_snapshots: snapshots.stats.count,
      report_snapshot_ms_total: Math.round(snapshots.stats.totalMs),
      report_snapshot_ms_max: Math.round(snapshots.stats.maxMs),
      report_final_write_ms: Math.round(finalWriteMs),
      rate_limited: runtime.budget.rateLimitedCount + runtime.creation.rateLimitedCount,
      learned_limit: runtime.budget.limit,
      rate_rules: runtime.budget.describe(),
      create_limited: runtime.creation.rateLimitedCount,
      create_limit: runtime.creation.limit,
      create_rules: runtime.creation.describe(),
    },
    'run finished',
  );
}

/** How often the service answered 429, and the budget it was kept to: a line after the summary. */
function rateLimitLines(runtime: Runtime): string[] {
  const creating = runtime.creation.rateLimitedCount;
  const limited = runtime.budget.rateLimitedCount + creating;
  if (limited === 0) return [];
  return [
    `the service answered 429 (rate limited) ${limited} time${limited === 1 ? '' : 's'}${creating > 0 ? ` (${creating} to creating calls, under their own limit)` : ''}; ` +
      `the budget kept to ${runtime.budget.describe()}${creating > 0 ? `, creating calls to ${runtime.creation.describe()}` : ''}` +
      `${runtime.shared ? `, in a window shared through ${runtime.coordination.address}` : ''}`,
  ];
}
