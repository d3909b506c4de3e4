import { restoreFrom } from '../actions/index.js';
import { lockScopeOf } from '../coord/file-lock.js';
import type { Plan } from '../plan/plan.js';
import { targetLabel } from '../report/report.js';
import { reportFromJournal } from '../report/from-journal.js';
import { Journal, journalPathFor, readJournal, type JournalState } from '../run/journal.js';
import { readJournalBack } from '../run/journal-read-back.js';
import { chooseRestores, type LeftAlone, type RestoreCandidate, type RestoreChoice } from '../run/restore-choice.js';
import { undoneWrites } from '../run/life/restore.js';
import type { StepResult } from '../run/types.js';
import { terminalMessage, terminalName } from '../util/safe-text.js';
import { UsageError, type GlobalOptions } from './runtime.js';
import { CoordinationError } from '../errors.js';
import { finishRun, outputFiles, REPORT_OUTPUTS, type OutputFlags } from './finish-run.js';
import { checkCommandOutputs, journalOf } from './output-check.js';
import { allEnded } from '../util/all-ended.js';
import { formatDuration } from '../util/duration.js';
import { refuseUnsealed } from './resume-run.js';
import { RestoreTools, type Confirmed } from './restore-tools.js';

export interface RestoreOptions extends OutputFlags {
  steps?: string[];
  dryRun?: boolean;
  yes?: boolean;
  waitLock?: boolean;
}

/**
 * `sitefleet restore REPORT`: the morning after. The run's own journal (sealed) says which writes
 * broke their sites and which restore point each took; the service's backup list must still show
 * that very backup, and the site must still be broken. Each restore is journaled in the run's
 * journal, on its write, as the run's own restores are: a second `restore`, `resume` and `status`
 * all see it, and one that may have reached the service is never sent again. Returns the exit code:
 * 0 when every broken site it knows of is restored (and healthy where the task checks it), 1 when one
 * is left broken or in question, 130 after Ctrl-C.
 */
export async function restoreRun(reportPath: string, globals: GlobalOptions, opts: RestoreOptions): Promise<number> {
  // The report is rewritten in place, beside its journal: checked before anything is read or sent (util/output-file.ts).
  const start = { report: { flag: 'report', path: reportPath }, flags: opts, env: globals.io.env };
  checkCommandOutputs(globals, await outputFiles(start, REPORT_OUTPUTS), [journalOf(reportPath)]);
  const state = readRun(reportPath, globals);
  const { plan } = state.start;
  const [{ warnIfUncoordinated }, { RunScope }] = await Promise.all([import('./session.js'), import('./run-scope.js')]);
  warnIfUncoordinated(state.start.coordination, globals);
  const lock = { scope: lockScopeOf(plan), command: `restore ${reportPath}`, wait: opts.waitLock };
  return RunScope.with(globals, lock, async (scope) => {
    const tools = new RestoreTools(scope, plan);
    try {
      // Read again under the lock: a resume or another restore may have moved the run on meanwhile.
      const fresh = readRun(reportPath, globals);
      const choice = chooseRestores(fresh, opts.steps);
      const { todo, left } = await tools.confirm(choice.todo, choice.left, fresh.start.started_at);
      describe(globals, { todo, left, follow: choice.follow }, opts.dryRun === true);
      const attention = left.some((l) => l.attention);
      if (opts.dryRun || todo.length + choice.follow.length + choice.inQuestion.length === 0) return attention ? 1 : 0;
      if (todo.length > 0)
        await globals.view.confirmWrites(
          'restore',
          `Restore ${todo.length} site${todo.length === 1 ? '' : 's'} through ${globals.baseUrl} for company ${plan.company}? ${restoreFrom.warning}.`,
          opts.yes,
        );
      const results = await restoreAll(reportPath, plan, fresh.results, { ...choice, todo }, tools);
      await finish(reportPath, globals, opts);
      if (tools.lost)
        throw new CoordinationError(
          `${tools.lost.message}: no restore was started after it (the report says which were); once it is back, carry on with \`sitefleet restore ${reportPath}\``,
        );
      if (tools.interrupted) return 130;
      return !attention && results.every(restoredWell) ? 0 : 1;
    } finally {
      await tools.close();
    }
  });
}

/** Restored, not seen broken after, and WordPress's database step (where one ran) done: a site left saying "Database update required" is not. */
function restoredWell(r: StepResult): boolean {
  const database = (r.database ?? []).filter((d) => d.after === 'restore');
  return r.restored?.status === 'succeeded' && r.restored.health?.outcome !== 'unhealthy' && database.every((d) => d.status === 'succeeded');
}

function readRun(reportPath: string, globals: GlobalOptions): JournalState {
  let state: JournalState;
  try {
    state = readJournalBack(journalPathFor(reportPath));
  } catch (error) {
    throw new UsageError(`cannot restore ${reportPath}: ${(error as Error).message}`);
  }
  refuseUnsealed(reportPath, state.start, globals, 'restore');
  return state;
}

/** What the restore will do, and what it leaves alone and why, before it asks. */
function describe(globals: GlobalOptions, { todo, left, follow }: { todo: Confirmed[]; left: LeftAlone[]; follow: RestoreCandidate[] }, dryRun: boolean): void {
  const out = (line: string) => void (!globals.quiet && globals.io.stdout.write(`${line}\n`));
  if (todo.length > 0)
    out(`${dryRun ? 'would restore' : 'to restore'}: ${todo.length} site${todo.length === 1 ? '' : 's'}${dryRun ? ' (dry run: nothing is sent)' : ''}`);
  for (const c of todo)
    out(
      `  ${terminalName(targetLabel({ target: c.step.target }))} (${terminalName(c.step.task)}, step ${terminalName(c.step.id)}): backup ${c.backupId}, tag ${terminalName(c.tag)}${c.ageMs === undefined ? '' : `, taken ${formatDuration(c.ageMs / 1000)} ago`}`,
    );
  for (const c of follow)
    out(
      `  following the restore of ${terminalName(targetLabel({ target: c.step.target }))} accepted before (operation ${terminalName(c.result.restored!.operation_id!)})`,
    );
  for (const l of left) out(`  not restored ${terminalName(l.step.id)}: ${terminalMessage(l.why)}`);
  if (todo.length + follow.length === 0) out('nothing to restore');
}

/** Every restore at once (one per environment), through the run's budget, journaled on its write. */
async function restoreAll(
  reportPath: string,
  plan: Plan,
  known: ReadonlyMap<string, StepResult>,
  choice: Pick<RestoreChoice, 'follow' | 'inQuestion'> & { todo: Confirmed[] },
  tools: RestoreTools,
): Promise<StepResult[]> {
  const journal = await Journal.open(journalPathFor(reportPath));
  try {
    // Read back as `unknown` (the run died while one was being sent): said so in the journal, never sent.
    for (const c of choice.inQuestion) await journal.append({ t: 'update', step: c.step.id, result: c.result, at: Date.now() });
    const update = (step: RestoreCandidate['step'], result: StepResult) => journal.append({ t: 'update', step: step.id, result, at: Date.now() });
    // Every restore ends (its answer journaled) before the journal closes, even when one of them failed.
    // A restore undoes the environment's earlier writes of the task too (one restore point before them all): said on each.
    const undoing = async (c: RestoreCandidate, restored: StepResult) => {
      for (const [step, undone] of undoneWrites(plan.steps, known, c.step, restored)) await update(step, undone);
      return restored;
    };
    // A restore that moved WordPress back is followed by its database step, as in the run.
    const database = (c: RestoreCandidate, restored: StepResult) => tools.afterRestore(c.step, restored, update);
    return await allEnded([
      ...choice.todo.map((c) =>
        tools
          .restore(c, update)
          .then((r) => database(c, r))
          .then((r) => undoing(c, r)),
      ),
      ...choice.follow.map((c) =>
        tools
          .follow(c, update)
          .then((r) => database(c, r))
          .then((r) => undoing(c, r)),
      ),
    ]);
  } finally {
    await journal.close();
  }
}

/** The run's report, rebuilt from its journal with the restores in it, through the one after-run seam. */
async function finish(reportPath: string, globals: GlobalOptions, flags: OutputFlags): Promise<void> {
  const state = readJournal(journalPathFor(reportPath));
  const report = reportFromJournal(state);
  await finishRun(
    {
      report: { flag: 'report', path: reportPath, value: report },
      flags,
      env: globals.io.env,
      io: globals.io,
      quiet: globals.quiet === true,
      view: globals.view,
      plan: state.start.plan,
    },
    REPORT_OUTPUTS,
  );
}
