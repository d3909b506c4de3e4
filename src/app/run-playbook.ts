import { randomUUID } from 'node:crypto';
import { slotPreviewLines } from './slot-preview.js';
import { existsSync } from 'node:fs';
import { buildReport } from '../report/report.js';
import { hasStartRecord, Journal, journalPathFor, type JournalRecord } from '../run/journal.js';
import type { Plan } from '../plan/plan.js';
import { readToken, UsageError, type GlobalOptions, type Runtime } from './runtime.js';
import { sealOf } from '../util/seal.js';
import { describeExpiring, keyFindings } from '../run/api-keys.js';
import type { Playbook } from '../playbook/types.js';
import { emptyTargetProblems, loadForRun, planFrom, type Prepared } from './prepare.js';
import { announceRun, finishRun, outputFiles, type Started } from './finish-run.js';
import { stateDirOf } from '../coord/open.js';
import { checkCommandOutputs, journalOf } from './output-check.js';
import { runSession } from './session.js';
import { RunScope } from './run-scope.js';
import { lockScopeOf } from '../coord/file-lock.js';

import { DEFAULT_MAX_PLAN_AGE, defaultReportPath, type RunOptions } from './run-options.js';
import { forTerminal } from '../util/safe-text.js';
import { parseDuration } from '../util/duration.js';
import { checkSavedPlan, type SavedPlanCheck } from '../plan/saved.js';
import { changedPlanError, playbookNamedBy, readSavedPlan, refuseOtherText, refuseStalePlan, type SavedPlan } from './saved-plan.js';
import { targetLabel } from '../report/report.js';
import { visualPreflight } from './visual.js';
import { formatDuration } from '../util/duration.js';
import { enterWindow, type Deadline } from './window.js';
import { estimateLines } from './estimate.js';

/** A start record as the run writes it, before its seal. */
type JournalStart = Omit<Extract<JournalRecord, { t: 'start' }>, 'seal'>;

/**
 * Lock, plan, confirm, execute with a journal, report: the whole `run` command, also used by `demo`.
 * The company's lock comes first, before the fleet is read: a second run must not plan from a fleet
 * the first one is changing, nor spend its rate budget on reads. A dry run takes no lock.
 */
export async function runPlaybook(file: string | undefined, globals: GlobalOptions, opts: RunOptions): Promise<{ exitCode: number; reportPath: string }> {
  const startedAt = new Date();
  if (!opts.plan && (opts.strictPlan || opts.maxPlanAge !== undefined))
    throw new UsageError(`${opts.strictPlan ? '--strict-plan' : '--max-plan-age'} goes with --plan FILE`);
  // A saved plan is checked against the playbook's text, company and age before the fleet is read.
  const saved = opts.plan ? readSavedPlan(opts.plan) : undefined;
  file ??=
    saved &&
    playbookNamedBy(
      saved,
      readToken(globals, () => undefined),
      globals.allowOutside,
    );
  if (!file) throw new UsageError('run needs a playbook, or --plan FILE (a plan saved by `sitefleet plan PLAYBOOK --out FILE`)');
  if (saved) refuseOtherText(saved, file);
  const playbook = loadForRun(file, globals);
  const refuseStale = () => saved && refuseStalePlan(saved, { playbook: file, company: playbook.company, maxAgeMs: planAgeMs(opts), at: Date.now() });
  refuseStale();
  opts.report ??= defaultReportPath(playbook.settings.report_dir, startedAt);
  // Every file the run will write, checked before the fleet is read (see util/output-file.ts).
  checkCommandOutputs(globals, await outputFiles({ report: { flag: '--report', path: opts.report }, flags: opts, env: globals.io.env, playbook }), [
    { what: 'the playbook', path: file },
    ...(saved ? [{ what: 'the saved plan (--plan)', path: saved.file }] : []),
    journalOf(opts.report),
  ]);
  if (!opts.dryRun) visualPreflight(playbook, globals.io.env, opts.report);
  if (!opts.dryRun && existsSync(journalPathFor(opts.report)) && hasStartRecord(journalPathFor(opts.report))) {
    // Said before the fleet is read: this report is another run's, which `resume` continues.
    throw new UsageError(
      `${journalPathFor(opts.report)} exists: this report belongs to another run (resume it with \`sitefleet resume ${opts.report}\`, or pick another --report)`,
    );
  }
  const request: RunRequest = { playbook, globals, opts, startedAt, saved };
  // A dry run takes no lock, but reads through the company's shared budget.
  if (opts.dryRun) return RunScope.with(globals, undefined, (scope) => planAndRun(request, scope));
  const report = { flag: '--report', path: opts.report };
  const start = { report, flags: opts, env: globals.io.env, playbook, io: globals.io, name: playbook.name, startedAt, stateDir: stateDirOf(globals) };
  // Told before the window is waited for and the lock taken: a monitor hears of a run that cannot start (exit 4 or 5) too.
  return announceRun(start, async (started) => {
    // The window is waited for before the lock and the fleet's read: the plan is made from the fleet as the window opens.
    const deadline = await enterWindow(globals.io, playbook.settings, opts, {
      say: (text) => void (!globals.quiet && globals.io.stdout.write(`${text}\n`)),
    });
    // Hours spent waiting for the window count against the plan's age.
    refuseStale();
    const lock = { scope: lockScopeOf(playbook), command: `run ${file}`, wait: opts.waitLock };
    return RunScope.with(globals, lock, (scope) => planAndRun({ ...request, deadline, started }, scope));
  });
}

const PREFLIGHT_WARN_MS = 7 * 86_400_000;

/** One read: a key about to expire is tomorrow night's failed run. A failed read says nothing (doctor looks closer). */
async function warnOfExpiringKeys(runtime: Runtime, company: string, globals: GlobalOptions): Promise<void> {
  try {
    const { api_keys } = await runtime.caller.read('listApiKeys', { id: company });
    const findings = keyFindings(api_keys, Date.now(), PREFLIGHT_WARN_MS);
    if (findings.expiring.length)
      globals.io.stderr.write(`sitefleet: warning: API key ${forTerminal(describeExpiring(findings))}; renew it before it stops scheduled runs\n`);
  } catch (error) {
    runtime.logger.debug({ err: (error as Error).message }, 'could not read the API keys for the pre-flight check');
  }
}

/** What a run (or a dry run) was asked for, as runPlaybook settled it before the fleet is read. */
interface RunRequest {
  playbook: Playbook & { company: string };
  globals: GlobalOptions;
  opts: RunOptions;
  startedAt: Date;
  saved?: SavedPlan;
  /** When the window closes: no write is sent after it. */
  deadline?: Deadline;
  /** The run as its channels were told of its start. */
  started?: Started;
}

/** Reads the fleet, plans, shows the plan and its estimate; then writes the dry run's report, or sends. */
async function planAndRun(request: RunRequest, scope: RunScope): Promise<{ exitCode: number; reportPath: string }> {
  const { globals, opts, saved } = request;
  const out = (text: string) => void (!globals.quiet && globals.io.stdout.write(`${text}\n`));
  const prepared = await planFrom(request.playbook, scope, saved?.plan.date);
  if (saved) {
    // The fleet as it is now, against the plan as it was reviewed: only what still holds is sent.
    const check = checkSavedPlan(saved.plan, prepared.plan, prepared.inventory);
    if (opts.strictPlan && check.changed.length > 0) throw changedPlanError(saved, check.changed);
    out(describeCheck(saved, check));
    prepared.plan = check.plan;
  }
  const { plan, runtime } = prepared;
  if (opts.wait) for (const task of plan.tasks) task.wait = true;
  out(globals.view.plan(plan, opts.verbose ?? false));
  const left = request.deadline ? { ms: request.deadline.at - Date.now(), name: `the time left before ${request.deadline.source}` } : undefined;
  for (const line of estimateLines(plan, runtime.pace, undefined, left)) out(line);
  for (const line of slotPreviewLines(plan, prepared.inventory)) out(line);
  const empty = emptyTargetProblems(prepared);
  if (empty) throw empty;
  if (opts.dryRun) return await finishDryRun(request, plan);
  return await send(request, { ...prepared, scope }, out);
}

/** A dry run's report: every step `planned`, through the outputs a report has. */
async function finishDryRun({ globals, opts, startedAt }: RunRequest, plan: Plan): Promise<{ exitCode: number; reportPath: string }> {
  const report = buildReport({ plan, mode: 'dry-run', startedAt, finishedAt: new Date() });
  const { io } = globals;
  await finishRun({
    report: { flag: '--report', path: opts.report!, value: report },
    flags: opts,
    env: io.env,
    io,
    quiet: globals.quiet === true,
    view: globals.view,
  });
  return { exitCode: 0, reportPath: opts.report! };
}

/** Confirms, opens the run's sealed journal, and runs the plan under it. */
async function send(
  request: RunRequest,
  { plan, runtime, playbook, scope }: Prepared & { scope: RunScope },
  out: (text: string) => void,
): Promise<{ exitCode: number; reportPath: string }> {
  const { globals, opts, startedAt, saved } = request;
  if (opts.preflight !== false) await warnOfExpiringKeys(runtime, plan.company, globals);
  if (plan.steps.length > 0)
    await globals.view.confirmWrites(
      'run',
      `Send ${plan.steps.length} calls to ${runtime.client.transport.location.origin} for company ${plan.company} (rate ${runtime.rate}, concurrency ${runtime.concurrency})?`,
      opts.yes,
    );
  const reportPath = opts.report!;
  const runId = randomUUID();
  const journal = await openJournal(
    reportPath,
    {
      t: 'start',
      v: 1,
      run_id: runId,
      playbook: playbook.file,
      report: reportPath,
      started_at: startedAt.toISOString(),
      plan,
      coordination: runtime.coordination.address,
      ...(saved ? { plan_file: saved.file } : {}),
    },
    globals,
    out,
  );
  const session = {
    plan,
    scope,
    journal,
    reportPath,
    runId,
    startedAt,
    playbook,
    out,
    flags: opts,
    deadline: request.deadline,
    started: request.started,
  };
  const { exitCode } = await runSession(session);
  return { exitCode, reportPath };
}

/** The run's journal, begun with its start record sealed with the token: resume acts only on a start record this token wrote (util/seal.ts). */
async function openJournal(reportPath: string, record: JournalStart, globals: GlobalOptions, out: (text: string) => void): Promise<Journal> {
  const journalPath = journalPathFor(reportPath);
  const start = {
    ...record,
    seal: sealOf(
      readToken(globals, () => undefined),
      'journal',
      record,
    ),
  };
  const { journal, replaced } = await Journal.create(journalPath, start).catch((error: NodeJS.ErrnoException) => {
    throw error.code === 'EEXIST'
      ? new UsageError(
          `${journalPath} exists: this report belongs to another run (resume it with \`sitefleet resume ${reportPath}\`, or pick another --report)`,
        )
      : error;
  });
  if (replaced) out(`${journalPath} belonged to a run stopped before it sent anything: starting afresh`);
  out(`report: ${reportPath} (journal: ${journal.path}; resume with \`sitefleet resume ${reportPath}\`)`);
  return journal;
}

/** What `run --plan` found: the steps that still hold, those dropped and why, and what the plan does not hold. */
function describeCheck(saved: SavedPlan, check: SavedPlanCheck): string {
  const age = formatDuration((Date.now() - Date.parse(saved.plan.made.at)) / 1000);
  const lines = [
    `applying ${saved.file} (made ${saved.plan.made.at}, ${age} ago): ${check.plan.steps.length} of its ${saved.plan.steps.length} steps still hold`,
  ];
  if (check.changed.length > 0) {
    lines.push(`  ${check.changed.length} changed since the plan: dropped (skipped), not sent`);
    for (const { step, change } of check.changed.slice(0, 10)) lines.push(`    ${forTerminal(`${step.task}, ${targetLabel(step)}: ${change}`)}`);
    if (check.changed.length > 10) lines.push(`    … ${check.changed.length - 10} more in the report`);
  }
  if (check.unplanned.length > 0)
    lines.push(
      `  ${check.unplanned.length} write${check.unplanned.length === 1 ? '' : 's'} the fleet needs now ${check.unplanned.length === 1 ? 'is' : 'are'} not in this plan: not sent (make a new plan to include them)`,
    );
  return lines.join('\n');
}

function planAgeMs(opts: RunOptions): number {
  return opts.maxPlanAge ?? parseDuration(DEFAULT_MAX_PLAN_AGE)!;
}
