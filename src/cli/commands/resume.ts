import type { Command } from 'commander';
import { createRuntime, UsageError, type GlobalOptions } from '../context.js';
import { Journal, journalPathFor, NoStartRecordError, readJournal, type JournalState } from '../../run/journal.js';
import { planResume } from '../../run/resume.js';
import { confirmWrites } from '../confirm.js';
import { buildReport, exitCodeOf, writeJsonAtomic } from '../../report/report.js';
import { renderSummary } from '../render.js';
import { runSession, withRunLock } from '../session.js';
import { EXIT_CODES_HELP } from './run.js';

interface ResumeOptions {
  yes?: boolean;
  wait?: boolean;
  waitLock?: boolean;
  maxFailures?: string;
  junit?: string;
  summaryMd?: string;
}

export function registerResume(program: Command): void {
  program
    .command('resume')
    .description('continue an interrupted run from its journal: send what was never sent, leave what ended alone')
    .argument('<report>', 'the report path the run was given (its journal sits beside it)')
    .option('-y, --yes', 'do not ask for confirmation')
    .option('--wait', 'poll every operation until it finished, including those accepted before the interruption')
    .option('--wait-lock', 'wait for the company lock instead of exiting 4')
    .option('--junit <file>', 'also write the outcome as JUnit XML')
    .option('--summary-md <file>', 'also write a Markdown summary (appended to $GITHUB_STEP_SUMMARY too, when set)')
    .option('--max-failures <budget>', 'override the failure budget (a count, or a percentage such as 10%)')
    .addHelpText(
      'after',
      `\nSteps sent without an answer are sent again only when that is safe (PUTs, state-setting POSTs);\ncreating calls (backups, WP-CLI, domains, DNS records, environments, sites) stay unknown for a person to check.\n${EXIT_CODES_HELP}\nExample:\n  sitefleet resume /var/log/sitefleet/backups.json --yes\n`,
    )
    .action(async (reportPath: string, opts: ResumeOptions, command: Command) => {
      const globals = command.optsWithGlobals<GlobalOptions>();
      if (opts.maxFailures !== undefined && !/^(\d+|(100|\d{1,2})(\.\d+)?%)$/.test(opts.maxFailures))
        throw new UsageError('--max-failures takes a count or a percentage such as 10%');
      const company = readState(reportPath).start.plan.company;
      // The lock first, then the journal read again: another resume may have moved it on meanwhile.
      process.exitCode = await withRunLock(globals, company, `resume ${reportPath}`, opts.waitLock, () =>
        resume(reportPath, readState(reportPath), globals, opts),
      );
    });
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
async function resume(reportPath: string, state: JournalState, globals: GlobalOptions, opts: ResumeOptions): Promise<number> {
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
    out(`    unknown: ${step.method} ${step.path} (${step.task}, ${step.target.site ?? ''}/${step.target.environment ?? ''})`);
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
    writeJsonAtomic(reportPath, report);
    out(`nothing left to send: every step has ended.\n${renderSummary(report, reportPath)}`);
    return exitCodeOf(report);
  }
  await confirmWrites(
    'resume',
    `Send ${todo.neverSent.length + todo.resend.length} calls${todo.toPoll.length ? ` and poll ${todo.toPoll.length} operations` : ''} to ${globals.baseUrl ?? '(no base URL)'} for company ${plan.company}?`,
    opts.yes,
  );
  const runtime = createRuntime(globals, plan.settings);
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
      overrideMaxFailures: opts.maxFailures === undefined ? undefined : /%$/.test(opts.maxFailures) ? opts.maxFailures : Number(opts.maxFailures),
      out,
    });
    return exitCode;
  } finally {
    await runtime.close();
  }
}
