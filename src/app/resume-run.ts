import { readToken, UsageError, type GlobalOptions } from './runtime.js';
import { hasSeal } from '../util/seal.js';
import { playbookSha256 } from './saved-plan.js';
import { Journal, journalPathFor, NoStartRecordError, type JournalState } from '../run/journal.js';
import { readJournalBack } from '../run/journal-read-back.js';
import { planResume, type ResumePlan } from '../run/resume.js';
import { InvalidInputError, SitefleetError } from '../errors.js';
import type { Plan } from '../plan/plan.js';
import { holdResumed, type ResumedPlan } from '../plan/resumed.js';
import type { PlanChange } from '../plan/saved.js';
import type { Playbook } from '../playbook/types.js';
import { MAX_PLAYBOOK_BYTES } from '../playbook/load.js';
import { targetLabel } from '../report/report.js';
import { InputFileError, readInputFile } from '../util/input-file.js';
import { loadForRun, planFrom } from './prepare.js';
import { exitCodeOf } from '../report/report.js';
import { reportFromJournal } from '../report/from-journal.js';
import { forTerminal } from '../util/safe-text.js';
import { runSession, warnIfUncoordinated } from './session.js';
import { RunScope } from './run-scope.js';
import { visualPreflight } from './visual.js';
import { endsOf, recordStagingOrWarn } from './staging-record.js';
import { recordWithheldOrWarn, reportBreaks, writeEndsOf } from './withheld-record.js';
import { lockScopeOf } from '../coord/file-lock.js';
import { enterWindow, type Deadline, type WindowOptions } from './window.js';
import { announceRun, finishRun, outputFiles, type OutputFlags, type Started } from './finish-run.js';
import { stateDirOf } from '../coord/open.js';
import { checkCommandOutputs, journalOf } from './output-check.js';

export interface ResumeOptions extends WindowOptions, OutputFlags {
  yes?: boolean;
  wait?: boolean;
  waitLock?: boolean;
  maxFailures?: string;
}

/** `sitefleet resume`: the lock first, then the journal read again (another resume may have moved it on meanwhile). */
export async function resumeRun(reportPath: string, globals: GlobalOptions, opts: ResumeOptions): Promise<number> {
  const state = readState(reportPath);
  const { start } = state;
  refuseUnsealed(reportPath, start, globals);
  // The run's window holds for what its resume sends or polls; a run with nothing left is brought up to date at any hour,
  // whatever became of its playbook since.
  const todo = planResume(state);
  const work = leftToDo(todo) > 0;
  const playbook = work ? playbookOfRun(reportPath, start, globals) : undefined;
  // Every file the resume writes, checked before anything is sent (see util/output-file.ts).
  checkCommandOutputs(globals, await outputFiles({ report: { flag: 'report', path: reportPath }, flags: opts, env: globals.io.env, playbook }), [
    journalOf(reportPath),
    { what: "the run's playbook", path: start.playbook },
    ...(start.plan_file ? [{ what: "the run's saved plan", path: start.plan_file }] : []),
  ]);
  // What a run checks before sending, a resume that sends checks too: Chromium and the images folder (health.visual).
  if (playbook) visualPreflight(playbook, globals.io.env, reportPath);
  warnIfUncoordinated(start.coordination, globals);
  const lockScope = lockScopeOf(playbook ?? start.plan);
  const { io } = globals;
  // A resume is told of as a run is (a ping's /start and /<exit code>); with nothing left to do it loads
  // no playbook, and only the flags (--ping, --metrics-file) name its channels.
  const begun = {
    report: { flag: 'report', path: reportPath },
    flags: opts,
    env: io.env,
    playbook,
    io,
    name: start.plan.name,
    startedAt: new Date(),
    stateDir: stateDirOf(globals),
  };
  return announceRun(begun, async (started) => {
    const deadline = playbook
      ? await enterWindow(io, playbook.settings, opts, { say: (text) => void (!globals.quiet && io.stdout.write(`${text}\n`)) })
      : undefined;
    const lock = { scope: lockScope, command: `resume ${reportPath}`, wait: opts.waitLock };
    return RunScope.with(globals, lock, (scope) => resume(reportPath, readState(reportPath), { playbook, globals, opts, scope, deadline, started }));
  });
}

/**
 * The start record must carry this token's seal (util/seal.ts): a journal rewritten in the report
 * folder, or one that names a playbook of the writer's choosing, is refused before anything of it is used.
 */
export function refuseUnsealed(reportPath: string, start: JournalState['start'], globals: GlobalOptions, command = 'resume'): void {
  if (
    !hasSeal(
      readToken(globals, () => undefined),
      'journal',
      start,
    )
  )
    throw new UsageError(
      `cannot ${command} ${reportPath}: its journal's start record does not carry this API token's seal (it was changed after the run, or the run used another token); nothing was sent${command === 'resume' ? ': start a new run' : ''}`,
    );
}

/**
 * The playbook the run was planned from, which alone says what a resume may send: the file the
 * (sealed) start record names, held to the sha256 the run recorded before a byte of it is parsed (a
 * text changed since is refused by name), and loaded as `run` loads it.
 */
function playbookOfRun(reportPath: string, start: JournalState['start'], globals: GlobalOptions): Playbook & { company: string } {
  const sha256 = start.plan.made?.playbook_sha256;
  if (!sha256)
    throw new UsageError(
      `${journalPathFor(reportPath)} does not say which playbook text it was planned from, so nothing it holds can be checked: start a new run`,
    );
  try {
    readInputFile(start.playbook, MAX_PLAYBOOK_BYTES); // a regular file of a playbook's size, or a clear line
  } catch (error) {
    if (error instanceof InputFileError) throw new UsageError(`cannot resume ${reportPath}: its playbook: ${error.message}`);
    throw error;
  }
  if (playbookSha256(start.playbook) !== sha256)
    throw new UsageError(
      `cannot resume ${reportPath}: ${start.playbook} is not the text its run was planned from (it changed since, or the journal names another file); resume sends only what that text asks for: start a new run`,
    );
  const playbook = loadForRun(start.playbook, { ...globals, company: globals.company ?? start.plan.company });
  if (playbook.company !== start.plan.company)
    throw new UsageError(`cannot resume ${reportPath}: its run was for company ${start.plan.company}, not ${playbook.company}`);
  return playbook;
}

function readState(reportPath: string): JournalState {
  try {
    return readJournalBack(journalPathFor(reportPath));
  } catch (error) {
    if (error instanceof NoStartRecordError) {
      throw new UsageError(
        `nothing to resume: the run of ${reportPath} was stopped before it sent anything; start it again with \`sitefleet run PLAYBOOK --report ${reportPath}\``,
      );
    }
    if (error instanceof SitefleetError) throw error;
    throw new UsageError(`cannot resume ${reportPath}: ${(error as Error).message}`);
  }
}

interface ResumeContext {
  /** Loaded when there was something to send or poll as the resume started. */
  playbook: (Playbook & { company: string }) | undefined;
  globals: GlobalOptions;
  opts: ResumeOptions;
  scope: RunScope;
  deadline: Deadline | undefined;
  started: Started;
}

/**
 * Says what it will do, reads the fleet and holds what is left against a plan made now from the
 * run's playbook, asks, and runs it; returns the exit code. Holds the company's lock.
 */
async function resume(reportPath: string, state: JournalState, ctx: ResumeContext): Promise<number> {
  const { globals, opts } = ctx;
  const out = (text: string) => void (!globals.quiet && globals.io.stdout.write(`${text}\n`));
  const todo = planResume(state);
  out(describeTodo(state, todo));
  if (leftToDo(todo) === 0) return upToDate(reportPath, state, todo, ctx);
  const playbook = ctx.playbook ?? playbookOfRun(reportPath, state.start, globals);
  const prepared = await planFrom(playbook, ctx.scope, state.start.plan.date);
  const held = holdResumed(state.start.plan, [...todo.neverSent, ...todo.resend], prepared.plan, prepared.inventory);
  if (held.refused.length > 0) throw refusal(journalPathFor(reportPath), state.start.plan, held.refused, playbook.file);
  for (const line of describeChanged(held)) out(line);
  const { plan } = held;
  if (opts.wait) for (const task of plan.tasks) task.wait = true;
  const sends = plan.steps.filter((s) => !todo.initial.has(s.id)).length;
  await globals.view.confirmWrites(
    'resume',
    `Send ${sends} calls${todo.toPoll.length ? ` and poll ${todo.toPoll.length} operations` : ''}${todo.toIsolate.length ? ` and go on isolating on ${todo.toIsolate.length} sites` : ''}${todo.toLook.length ? ` and look at ${todo.toLook.length} sites written before` : ''}${todo.toRestore.length ? ` and restore ${todo.toRestore.length} broken sites` : ''}${todo.toUndo.length ? ` and put back the items of ${todo.toUndo.length} broken sites` : ''} to ${globals.baseUrl ?? '(no base URL)'} for company ${plan.company}?`,
    opts.yes,
  );
  const journal = await Journal.open(journalPathFor(reportPath));
  // The run's clock, as its records are dated (session.ts).
  const now = () => globals.io.now();
  await journal.append({ t: 'resume', at: now() });
  for (const step of todo.leftUnknown) await journal.append({ t: 'result', step: step.id, result: todo.initial.get(step.id)!, at: now() });
  for (const step of todo.restoresInQuestion) await journal.append({ t: 'update', step: step.id, result: todo.initial.get(step.id)!, at: now() });
  await journalSettled(journal, todo, now);
  const { exitCode } = await runSession({
    plan,
    scope: ctx.scope,
    journal,
    reportPath,
    runId: state.start.run_id,
    startedAt: new Date(state.start.started_at),
    playbook,
    initial: todo.initial,
    room: state.room,
    flags: opts,
    deadline: ctx.deadline,
    started: ctx.started,
    overrideMaxFailures: opts.maxFailures === undefined ? undefined : /%$/.test(opts.maxFailures) ? opts.maxFailures : Number(opts.maxFailures),
    out,
  });
  return exitCode;
}

/** What the writes of guard groups a kill left unsettled say of their items (planResume put it in `initial`). */
async function journalSettled(journal: Journal, todo: ResumePlan, now: () => number): Promise<void> {
  for (const { said } of todo.toSettle) for (const [step, result] of said) await journal.append({ t: 'update', step: step.id, result, at: now() });
}

/** What a resume has left to send, poll, look at, restore or isolate. */
function leftToDo(todo: ResumePlan): number {
  return (
    todo.neverSent.length + todo.resend.length + todo.toPoll.length + todo.toIsolate.length + todo.toLook.length + todo.toRestore.length + todo.toUndo.length
  );
}

function describeTodo(state: JournalState, todo: ResumePlan): string {
  const lines = [
    `resuming run ${state.start.run_id} of ${forTerminal(state.start.playbook)} (${state.start.plan.steps.length} steps):`,
    `  ${todo.ended.length} ended before: left alone${todo.toPoll.length ? ` (${todo.toPoll.length} accepted operations will be polled)` : ''}`,
    ...(todo.toIsolate.length ? [`  ${todo.toIsolate.length} isolating the update that broke their site: isolation goes on`] : []),
    ...(todo.toSettle.length
      ? [
          `  ${todo.toSettle.length} guard group${todo.toSettle.length === 1 ? '' : 's'} whose isolation ended before their writes said what became of their items: said now`,
        ]
      : []),
    ...(todo.toLook.length ? [`  ${todo.toLook.length} written and never looked at after: their cache is cleared and their page looked at`] : []),
    ...(todo.toRestore.length ? [`  ${todo.toRestore.length} broken by their write, their restore kept from leaving: restored now`] : []),
    ...(todo.toUndo.length
      ? [`  ${todo.toUndo.length} broken by their write, their items being put back by their own files: put back now, then looked at`]
      : []),
    `  ${todo.neverSent.length} never sent: will be sent`,
    `  ${todo.resend.length} sent without an answer, safe to repeat: will be sent again`,
    `  ${todo.leftUnknown.length} sent without an answer, creating something: left unknown, check them by hand`,
  ];
  for (const step of todo.leftUnknown.slice(0, 10))
    lines.push(`    unknown: ${forTerminal(`${step.method} ${step.path} (${step.task}, ${step.target.site ?? ''}/${step.target.environment ?? ''})`)}`);
  return lines.join('\n');
}

/** Nothing to send or poll: say so, bring the report (and the other outputs) up to date with the journal, send nothing. */
async function upToDate(reportPath: string, state: JournalState, todo: ResumePlan, { globals, opts, started, scope }: ResumeContext): Promise<number> {
  if (todo.toSettle.length > 0) {
    // Said from the journal alone (nothing is read from the fleet or sent): the run's playbook, window and Chromium are not needed for it.
    const journal = await Journal.open(journalPathFor(reportPath));
    try {
      await journal.append({ t: 'resume', at: globals.io.now() });
      await journalSettled(journal, todo, () => globals.io.now());
    } finally {
      await journal.close();
    }
  }
  const report = reportFromJournal(state, todo.initial);
  // A run cut off after its staging steps ended, before it recorded them: recorded now.
  await recordStagingOrWarn(scope, state.start.plan.company, endsOf(state.start.plan, todo.initial));
  await recordWithheldOrWarn(scope, {
    company: state.start.plan.company,
    runId: state.start.run_id,
    ended: writeEndsOf(state.start.plan, todo.initial),
    runAt: Date.parse(state.start.started_at),
    breaks: reportBreaks(report),
  });
  const { io } = globals;
  await finishRun({
    report: { flag: 'report', path: reportPath, value: report },
    flags: opts,
    env: io.env,
    io,
    quiet: globals.quiet === true,
    view: globals.view,
    before: ['nothing left to send: every step has ended.'],
    started,
  });
  return exitCodeOf(report);
}

/** What the fleet changed under since the run: dropped, not sent. */
function describeChanged({ changed }: ResumedPlan): string[] {
  if (changed.length === 0) return [];
  const lines = [`  ${changed.length} changed since the run: dropped (skipped), not sent`];
  for (const { step, change } of changed.slice(0, 10)) lines.push(`    ${forTerminal(`${step.task}, ${targetLabel(step)}: ${change}`)}`);
  if (changed.length > 10) lines.push(`    … ${changed.length - 10} more in the report`);
  return lines;
}

/** Steps the playbook would not make: the journal was changed after its run. Exit 2, one line, nothing sent. */
function refusal(journalPath: string, plan: Plan, refused: PlanChange[], playbook: string): InvalidInputError {
  const { step, change } = refused[0]!;
  const more = refused.length > 1 ? ` (and ${refused.length - 1} more steps)` : '';
  return new InvalidInputError([
    {
      file: journalPath,
      line: 1,
      path: `plan.steps.${plan.steps.indexOf(step)}`,
      message: forTerminal(`${step.task}, ${targetLabel(step)}: not what ${playbook} sends (${change})${more}; resume sends nothing: start a new run`),
    },
  ]);
}
