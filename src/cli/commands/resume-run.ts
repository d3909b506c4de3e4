import { createRuntime, UsageError, type GlobalOptions } from '../context.js';
import { Journal, journalPathFor, NoStartRecordError, readJournal, type JournalState } from '../../run/journal.js';
import { planResume } from '../../run/resume.js';
import { confirmWrites } from '../confirm.js';
import { buildReport, exitCodeOf, writeJsonAtomic } from '../../report/report.js';
import { forTerminal } from '../../util/safe-text.js';
import { renderSummary } from '../render.js';
import { runSession, warnIfUncoordinated, withRunLock } from '../session.js';
import { lockScopeOf } from '../../coord/file-lock.js';
import type { Coordination } from '../../coord/types.js';
import { enterWindow, type Deadline, type WindowOptions } from '../window.js';
import { ciOutputFiles } from '../ci-outputs.js';
import { checkCommandOutputs, journalOf } from '../output-check.js';

export interface ResumeOptions extends WindowOptions {
  yes?: boolean;
  wait?: boolean;
  waitLock?: boolean;
  maxFailures?: string;
  junit?: string;
  summaryMd?: string;
}

/** `sitefleet resume`: the lock first, then the journal read again (another resume may have moved it on meanwhile). */
export async function resumeRun(reportPath: string, globals: GlobalOptions, opts: ResumeOptions): Promise<number> {
  const state = readState(reportPath);
  const { start } = state;
  // Every file the resume writes, checked before anything is sent (see util/output-file.ts).
  checkCommandOutputs(
    globals,
    [{ flag: 'report', path: reportPath, kind: 'report' }, ...ciOutputFiles(opts)],
    [
      journalOf(reportPath),
      { what: "the run's playbook", path: start.playbook },
      ...(start.plan_file ? [{ what: "the run's saved plan", path: start.plan_file }] : []),
    ],
  );
  warnIfUncoordinated(start.coordination, globals);
  const scope = lockScopeOf(start.plan);
  // The run's window holds for what its resume sends or polls; a run with nothing left is brought up to date at any hour.
  const todo = planResume(state);
  const deadline =
    todo.neverSent.length + todo.resend.length + todo.toPoll.length > 0
      ? await enterWindow(start.plan.settings, opts, (text) => void (!globals.quiet && process.stdout.write(`${text}\n`)))
      : undefined;
  return withRunLock(globals, scope, `resume ${reportPath}`, opts.waitLock, (coordination) =>
    resume(reportPath, readState(reportPath), globals, opts, coordination, deadline),
  );
}

function readState(reportPath: string): JournalState {
  try {
    return readJournal(journalPathFor(reportPath));
  } catch (error) {
    if (error instanceof NoStartRecordError) {
      throw new UsageError(
        `nothing to resume: the run of ${reportPath} was stopped before it sent anything; start it again with \`sitefleet run PLAYBOOK --report ${reportPath}\``,
      );
    }
    throw new UsageError(`cannot resume ${reportPath}: ${(error as Error).message}`);
  }
}

/** Says what it will do, asks, and runs what is left; returns the exit code. Holds the company's lock. */
async function resume(
  reportPath: string,
  state: JournalState,
  globals: GlobalOptions,
  opts: ResumeOptions,
  coordination: Coordination,
  deadline: Deadline | undefined,
): Promise<number> {
  const out = (text: string) => void (!globals.quiet && process.stdout.write(`${text}\n`));
  const plan = state.start.plan;
  if (opts.wait) for (const task of plan.tasks) task.wait = true;
  const todo = planResume(state);
  out(
    [
      `resuming run ${state.start.run_id} of ${state.start.playbook} (${plan.steps.length} steps):`,
      `  ${todo.ended.length} ended before: left alone${todo.toPoll.length ? ` (${todo.toPoll.length} accepted operations will be polled)` : ''}`,
      `  ${todo.neverSent.length} never sent: will be sent`,
      `  ${todo.resend.length} sent without an answer, safe to repeat: will be sent again`,
      `  ${todo.leftUnknown.length} sent without an answer, creating something: left unknown, check them by hand`,
    ].join('\n'),
  );
  for (const step of todo.leftUnknown.slice(0, 10))
    out(`    unknown: ${forTerminal(`${step.method} ${step.path} (${step.task}, ${step.target.site ?? ''}/${step.target.environment ?? ''})`)}`);
  const work = todo.neverSent.length + todo.resend.length + todo.toPoll.length;
  if (work === 0) {
    // Nothing to send or poll: say so, bring the report up to date with the journal, send nothing.
    const report = buildReport({
      plan,
      mode: 'run',
      startedAt: new Date(state.start.started_at),
      finishedAt: new Date(),
      results: todo.initial,
      stopped: state.stopped,
      runId: state.start.run_id,
    });
    writeJsonAtomic({ flag: 'report', path: reportPath, kind: 'report' }, report);
    out(`nothing left to send: every step has ended.\n${renderSummary(report, reportPath)}`);
    return exitCodeOf(report);
  }
  await confirmWrites(
    'resume',
    `Send ${todo.neverSent.length + todo.resend.length} calls${todo.toPoll.length ? ` and poll ${todo.toPoll.length} operations` : ''} to ${globals.baseUrl ?? '(no base URL)'} for company ${plan.company}?`,
    opts.yes,
  );
  const runtime = createRuntime(globals, { settings: plan.settings, coordination, company: plan.company });
  try {
    const journal = await Journal.open(journalPathFor(reportPath));
    await journal.append({ t: 'resume', at: Date.now() });
    for (const step of todo.leftUnknown) await journal.append({ t: 'result', step: step.id, result: todo.initial.get(step.id)!, at: Date.now() });
    const { exitCode } = await runSession({
      plan,
      runtime,
      journal,
      reportPath,
      runId: state.start.run_id,
      startedAt: new Date(state.start.started_at),
      globals,
      initial: todo.initial,
      ci: opts,
      deadline,
      overrideMaxFailures: opts.maxFailures === undefined ? undefined : /%$/.test(opts.maxFailures) ? opts.maxFailures : Number(opts.maxFailures),
      out,
    });
    return exitCode;
  } finally {
    await runtime.close();
  }
}
