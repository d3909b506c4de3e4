import { forTerminal, jsonText } from '../util/safe-text.js';
import type { Plan } from '../plan/plan.js';
import type { Playbook } from '../playbook/types.js';
import { buildReport, exitCodeOf, writeJsonAtomic, type Report } from '../report/report.js';
import { execute } from '../run/executor.js';
import type { StepResult } from '../run/types.js';
import { readJournal, type Journal } from '../run/journal.js';
import { openCoordination } from '../coord/open.js';
import type { Coordination, LockScope } from '../coord/types.js';
import type { GlobalOptions, Runtime } from './context.js';
import { writeFileAtomicAsync } from '../util/atomic-write.js';
import { Progress } from './progress.js';
import { onInterrupt } from './signals.js';
import { writeCiOutputs, type CiOutputOptions } from './ci-outputs.js';
import { renderSummary } from './render.js';
import { writePrivateOutputs } from './secret-outputs.js';

export interface SessionArgs {
  plan: Plan;
  runtime: Runtime;
  journal: Journal;
  reportPath: string;
  runId: string;
  startedAt: Date;
  globals: GlobalOptions;
  /** Resume: results that stand. */
  initial?: Map<string, StepResult>;
  overrideMaxFailures?: number | string;
  /** For writing login links to the files the tasks name (a fresh run only: resume has no playbook). */
  playbook?: Playbook;
  /** JUnit and Markdown outputs (`--junit`, `--summary-md`, GitHub Actions). */
  ci?: CiOutputOptions;
  out(text: string): void;
}

/**
 * Resume and status continue a run: one that shared its lock and budget through Redis is continued
 * through it too, or the user is told that this one shares nothing with the other machines.
 */
export function warnIfUncoordinated(recorded: string | undefined, globals: GlobalOptions): void {
  if (recorded && !globals.coordination)
    process.stderr.write(
      `sitefleet: warning: this run was coordinated through ${recorded}; without --coordination (or SITEFLEET_COORDINATION) this command shares no lock or budget with other machines\n`,
    );
}

/**
 * Opens the coordination (this machine, or Redis with --coordination), holds the run lock of `scope`
 * (exit 4, or waiting with --wait-lock) while `work` runs under it, then lets both go.
 */
export async function withRunLock<T>(
  globals: GlobalOptions,
  scope: LockScope,
  command: string,
  waitLock: boolean | undefined,
  work: (coordination: Coordination) => Promise<T>,
): Promise<T> {
  const coordination = await openCoordination(globals);
  try {
    if (scope.kind === 'playbook' && !globals.coordination)
      process.stderr.write(
        `sitefleet: warning: lock: playbook without --coordination: runs of other playbooks for this company may go at the same time, and each learns the rate limit from 429s on its own\n`,
      );
    const lock = await coordination.lock(scope, { command, wait: waitLock, onNote: (text) => process.stderr.write(`sitefleet: ${forTerminal(text)}\n`) });
    try {
      return await work(coordination);
    } finally {
      await lock.release();
    }
  } finally {
    await coordination.close();
  }
}

/** Snapshots come at least this far apart, and 50 times as far apart as one takes to build: ≤ 2% of the run. */
const REPORT_EVERY_MS = 5000;

/**
 * Executes a plan with everything a real run needs around it: the journal (intent before each send,
 * the answer as soon as it is in), Ctrl-C handling, a progress line, a report rewritten every few
 * seconds, and at the end the report rebuilt from the journal itself.
 */
export async function runSession(args: SessionArgs): Promise<{ report: Report; exitCode: number }> {
  const { plan, runtime, journal, globals } = args;
  const live = new Map(args.initial ?? []);
  // During the run the report is a compact snapshot, rewritten every few seconds when something
  // changed, written out asynchronously; only building it holds the event loop, and that is measured.
  // The final report, rebuilt from the journal, is indented for people.
  const snapshots = { count: 0, totalMs: 0, maxMs: 0 };
  let changed = true;
  let writing = false;
  let nextSnapshotAt = 0;
  const writeSnapshot = async () => {
    if (!changed || writing || performance.now() < nextSnapshotAt) return;
    changed = false;
    writing = true;
    const t0 = performance.now();
    const text = jsonText(snapshot());
    const ms = performance.now() - t0;
    snapshots.count++;
    snapshots.totalMs += ms;
    snapshots.maxMs = Math.max(snapshots.maxMs, ms);
    nextSnapshotAt = performance.now() + Math.max(REPORT_EVERY_MS, 50 * ms);
    try {
      await writeFileAtomicAsync(args.reportPath, text);
    } catch (error) {
      runtime.logger.warn({ err: (error as Error).message }, 'could not write the report snapshot');
    } finally {
      writing = false;
    }
  };
  const cpuAtStart = process.cpuUsage();
  const wallAtStart = performance.now();
  const snapshot = () => buildReport({ plan, mode: 'run', startedAt: args.startedAt, finishedAt: new Date(), results: live, runId: args.runId });

  const interrupt = new AbortController();
  const restoreSignals = onInterrupt((signal) => {
    runtime.logger.warn({ signal }, 'interrupted: no new calls; waiting for those in flight (again to stop at once)');
    if (!globals.quiet) process.stderr.write(`\n${signal}: finishing the calls in flight; press Ctrl-C again to stop at once\n`);
    interrupt.abort();
  });
  const pending = plan.steps.filter((s) => !live.has(s.id)).length;
  const progress = new Progress(pending, process.stderr, !globals.quiet && process.stderr.isTTY === true);
  progress.note = () => {
    const paused = Math.max(runtime.budget.pausedForMs(), runtime.shared?.pausedForMs() ?? 0);
    return paused > 0 ? `paused by the service's rate limit: ${Math.ceil(paused / 1000)}s` : undefined;
  };
  const timer = setInterval(() => void writeSnapshot(), 1000);
  timer.unref();
  // A pause of the service's (a second or more) is seen by at least three redraws; cron and CI draw nothing.
  const ticker = progress.enabled ? setInterval(() => progress.tick(), 250) : undefined;
  ticker?.unref();
  writeJsonAtomic(args.reportPath, snapshot());
  const at = () => Date.now();

  let outcome;
  try {
    outcome = await execute(plan, {
      caller: runtime.caller,
      logger: runtime.logger,
      overrideMaxFailures: args.overrideMaxFailures,
      signal: interrupt.signal,
      lost: runtime.coordination.lost,
      busy: runtime.coordination.busy(plan.company, args.runId),
      tracking: runtime.tracking,
      initial: args.initial,
      async onEvent(event) {
        switch (event.type) {
          case 'attempt':
            return journal.append({ t: 'intent', step: event.step.id, attempt: event.attempt, at: at() });
          case 'stopped':
            return journal.append({ t: 'stopped', kind: event.kind, reason: event.reason, at: at() });
          case 'result':
          case 'update': {
            const { step, result } = event;
            live.set(step.id, result);
            changed = true;
            if (event.type === 'result') progress.step(result.status === 'failed' || result.status === 'unknown');
            // Problems at info (a log file's default level); every other step at debug: the journal
            // and the report hold every outcome, and a line per step costs more than it tells.
            const problem = result.status === 'failed' || result.status === 'unknown';
            runtime.logger[problem ? 'info' : 'debug'](
              {
                step: step.id,
                task: step.task,
                env_id: step.target.env_id,
                status: result.status,
                http_status: result.http_status,
                operation_id: result.operation_id,
                attempts: result.attempts,
                reason: result.reason,
              },
              event.type === 'result' ? 'step answered' : 'step updated',
            );
            return journal.append({ t: event.type, step: step.id, result, at: at() });
          }
        }
      },
    });
  } finally {
    clearInterval(timer);
    clearInterval(ticker);
    progress.end();
    restoreSignals();
  }
  await journal.append({ t: 'end', at: at() });
  await journal.close();

  if (args.playbook) for (const line of writePrivateOutputs(args.playbook, plan, outcome.results)) args.out(line);
  // The report is rebuilt from the journal: what it says is what a resume would see.
  const state = readJournal(journal.path);
  const report = buildReport({
    plan,
    mode: 'run',
    startedAt: args.startedAt,
    finishedAt: new Date(),
    results: state.results,
    stopped: state.stopped,
    runId: args.runId,
  });
  while (writing) await new Promise((r) => setTimeout(r, 5)); // a snapshot must not land after the final report
  const finalStart = performance.now();
  writeJsonAtomic(args.reportPath, report);
  const finalMs = performance.now() - finalStart;
  const cpu = process.cpuUsage(cpuAtStart);
  runtime.logger.info(
    {
      steps: plan.steps.length,
      wall_ms: Math.round(performance.now() - wallAtStart),
      cpu_user_ms: Math.round(cpu.user / 1000),
      cpu_system_ms: Math.round(cpu.system / 1000),
      max_rss_mb: Math.round(process.resourceUsage().maxRSS / 1024),
      report_snapshots: snapshots.count,
      report_snapshot_ms_total: Math.round(snapshots.totalMs),
      report_snapshot_ms_max: Math.round(snapshots.maxMs),
      report_final_write_ms: Math.round(finalMs),
      rate_limited: runtime.budget.rateLimitedCount + runtime.creation.rateLimitedCount,
      learned_limit: runtime.budget.limit,
      rate_rules: runtime.budget.describe(),
      create_limited: runtime.creation.rateLimitedCount,
      create_limit: runtime.creation.limit,
      create_rules: runtime.creation.describe(),
    },
    'run finished',
  );
  args.out(renderSummary(report, args.reportPath));
  writeCiOutputs(report, args.reportPath, args.ci ?? {});
  const creating = runtime.creation.rateLimitedCount;
  const limited = runtime.budget.rateLimitedCount + creating;
  if (limited > 0)
    args.out(
      `the service answered 429 (rate limited) ${limited} time${limited === 1 ? '' : 's'}${creating > 0 ? ` (${creating} to creating calls, under their own limit)` : ''}; ` +
        `the budget kept to ${runtime.budget.describe()}${creating > 0 ? `, creating calls to ${runtime.creation.describe()}` : ''}` +
        `${runtime.shared ? `, in a window shared through ${runtime.coordination.address}` : ''}`,
    );
  return { report, exitCode: exitCodeOf(report) };
}
