import { restoreFrom } from '../../actions/index.js';
import type { BackupListResponse } from '../../api/types.js';
import { lockScopeOf } from '../../coord/file-lock.js';
import { SiteProbe } from '../../health/probe.js';
import type { Plan } from '../../plan/plan.js';
import { backupMismatch, chooseRestores, type RestoreCandidate } from '../../run/restore-choice.js';
import { buildReport, targetLabel, type Report } from '../../report/report.js';
import { HealthGate } from '../../run/health-gate.js';
import { Journal, journalPathFor, readJournal, type JournalState } from '../../run/journal.js';
import { readJournalBack } from '../../run/journal-read-back.js';
import { PRIORITY } from '../../run/rate-budget.js';
import { followRestore, restoreBroken } from '../../run/restore.js';
import type { StepResult } from '../../run/types.js';
import { DEFAULT_TRACKING, Watcher } from '../../run/watcher.js';
import { systemClock } from '../../util/clock.js';
import { terminalMessage, terminalName } from '../../util/safe-text.js';
import { siteUserAgent } from '../../util/version.js';
import { confirmWrites } from '../confirm.js';
import { createRuntime, UsageError, type GlobalOptions, type Runtime } from '../context.js';
import { finishRun, type OutputFlags } from '../finish-run.js';
import { formatDuration } from '../progress.js';
import { onInterrupt } from '../signals.js';
import { refuseUnsealed } from './resume-run.js';

export interface RestoreOptions extends OutputFlags {
  steps?: string[];
  dryRun?: boolean;
  yes?: boolean;
  waitLock?: boolean;
}

/** A candidate the service's backup list confirmed, with the backup's age. */
interface Confirmed extends RestoreCandidate {
  ageMs: number | undefined;
}

/**
 * `sitefleet restore REPORT`: the morning after. The run's own journal (sealed) says which writes
 * failed and which restore point each took; the service's backup list must still show that very
 * backup under that tag. Each restore is journaled in the run's journal, on its write, as the run's
 * own restores are: a second `restore`, `resume` and `status` all see it, and one that may have
 * reached the service is never sent again. Returns the exit code: 0 when every restore asked for
 * ended with its site restored (and healthy where the task checks it).
 */
export async function restoreRun(reportPath: string, globals: GlobalOptions, opts: RestoreOptions): Promise<number> {
  const state = readRun(reportPath, globals);
  const { plan } = state.start;
  return (await import('../session.js')).withRunLock(globals, lockScopeOf(plan), `restore ${reportPath}`, opts.waitLock, async (coordination) => {
    const runtime = createRuntime(globals, { coordination, company: plan.company, settings: plan.settings });
    try {
      const choice = chooseRestores(readRun(reportPath, globals), opts.steps);
      const { todo, left } = await confirmBackups(runtime, choice.todo, [...choice.left]);
      describe(globals, todo, left, choice.follow, opts.dryRun === true);
      if (opts.dryRun || todo.length + choice.follow.length === 0) return left.length > 0 && opts.steps ? 1 : 0;
      if (todo.length > 0)
        await confirmWrites(
          globals.io,
          'restore',
          `Restore ${todo.length} site${todo.length === 1 ? '' : 's'} through ${globals.baseUrl} for company ${plan.company}? ${restoreFrom.warning}.`,
          opts.yes,
        );
      const results = await restoreAll(reportPath, plan, { todo, follow: choice.follow }, runtime, globals);
      await finish(reportPath, globals, opts);
      return results.every((r) => r.restored?.status === 'succeeded' && r.restored.health?.outcome !== 'unhealthy') ? 0 : 1;
    } finally {
      await runtime.close();
    }
  });
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

/** One read of each environment's backups: the backup must be the run's restore point, still listed. */
async function confirmBackups(runtime: Runtime, candidates: RestoreCandidate[], left: { step: RestoreCandidate['step']; why: string }[]) {
  const todo: Confirmed[] = [];
  for (const c of candidates) {
    const list = await runtime.caller.read<Partial<BackupListResponse>>('listBackups', { env_id: c.step.target.env_id! }, undefined, {
      priority: PRIORITY.urgent,
    });
    const backups = list.environment?.backups ?? [];
    const why = backupMismatch(c, backups);
    if (why) left.push({ step: c.step, why });
    else {
      const created = backups.find((b) => b.id === c.backupId)!.created_at;
      todo.push({ ...c, ageMs: typeof created === 'number' ? Date.now() - created : undefined });
    }
  }
  return { todo, left };
}

function describe(
  globals: GlobalOptions,
  todo: Confirmed[],
  left: { step: RestoreCandidate['step']; why: string }[],
  follow: RestoreCandidate[],
  dryRun: boolean,
): void {
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

/** Every restore at once (each its own environment), through the run's budget, journaled on its write. */
async function restoreAll(
  reportPath: string,
  plan: Plan,
  { todo, follow }: { todo: Confirmed[]; follow: RestoreCandidate[] },
  runtime: Runtime,
  globals: GlobalOptions,
): Promise<StepResult[]> {
  const journal = await Journal.open(journalPathFor(reportPath));
  const interrupt = new AbortController();
  const restoreSignals = onInterrupt(globals.io, () => interrupt.abort());
  const watcher = new Watcher((id, o) => runtime.caller.poll(id, o), {
    firstPollMs: runtime.tracking.intervalMs,
    maxIntervalMs: runtime.tracking.maxIntervalMs,
    signal: interrupt.signal,
  });
  const sites = plan.tasks.some((t) => t.health) ? new SiteProbe({ userAgent: siteUserAgent(), env: globals.io.env }) : undefined;
  try {
    return await Promise.all(
      [...todo, ...follow].map((c) => {
        const task = plan.tasks.find((t) => t.index === c.step.task_index)!;
        const gate = task.health && sites ? new HealthGate(sites, task.health, systemClock, interrupt.signal) : undefined;
        const url = c.step.health && 'url' in c.step.health ? c.step.health.url : undefined;
        const ctx = {
          caller: runtime.caller,
          watcher,
          update: (step: RestoreCandidate['step'], result: StepResult) => journal.append({ t: 'update', step: step.id, result, at: Date.now() }),
          interrupt: interrupt.signal,
          settings: plan.settings.restore,
          watch: {
            timeoutMs: task.timeout_ms ?? runtime.tracking.timeoutMs ?? DEFAULT_TRACKING.timeoutMs,
            notFoundGraceMs: runtime.tracking.notFoundGraceMs ?? DEFAULT_TRACKING.notFoundGraceMs,
          },
        };
        if (follow.includes(c)) return followRestore(ctx, c.step, c.result, gate, url);
        return restoreBroken(ctx, c.step, { ...c.result, restore_point: { tag: c.tag, backup_id: c.backupId } }, gate, url);
      }),
    );
  } finally {
    restoreSignals();
    await sites?.close();
    await journal.close();
  }
}

/** The run's report, rebuilt from its journal with the restores in it, through the one after-run seam. */
async function finish(reportPath: string, globals: GlobalOptions, flags: OutputFlags): Promise<Report> {
  const state = readJournal(journalPathFor(reportPath));
  const report = buildReport({
    plan: state.start.plan,
    mode: 'run',
    startedAt: new Date(state.start.started_at),
    finishedAt: new Date(),
    results: state.results,
    stopped: state.stopped,
    runId: state.start.run_id,
  });
  await finishRun({
    report: { flag: 'report', path: reportPath, value: report },
    flags,
    env: globals.io.env,
    io: globals.io,
    quiet: globals.quiet === true,
    plan: state.start.plan,
  });
  return report;
}
