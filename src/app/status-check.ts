import { existsSync } from 'node:fs';
import { sharedStop } from './signals.js';
import { exitCodeOf, summarize, type Report, type ReportResult } from '../report/report.js';
import { Journal, journalPathFor } from '../run/journal.js';
import { readJournalBack } from '../run/journal-read-back.js';
import { lockScopeOf } from '../coord/file-lock.js';
import type { LockScope } from '../coord/types.js';
import { DEFAULT_TRACKING, type Tracked } from '../run/watcher.js';
import { operationEnd } from '../run/operation-end.js';
import type { StepResult } from '../run/types.js';
import { forTerminal } from '../util/safe-text.js';
import { readJsonFile } from '../util/json-input.js';
import { EXIT } from '../errors.js';
import type { GlobalOptions } from './runtime.js';
import { finishRun, outputFiles, REPORT_OUTPUTS, type OutputFlags } from './finish-run.js';
import { checkCommandOutputs, journalOf } from './output-check.js';
import { RunScope } from './run-scope.js';
import { warnIfUncoordinated } from './session.js';
import { recordStagingOrWarn } from './staging-record.js';
import { recordWithheldOrWarn, reportBreaks, writeEndsOfReport } from './withheld-record.js';
import { allEnded } from '../util/all-ended.js';
import { readBackEnded } from './status-read-back.js';

/** A report of 50,000 steps is some 60 MB of JSON; past this it is not a report sitefleet wrote. */
const MAX_REPORT_BYTES = 512 << 20;

interface FollowOptions {
  /** How long to keep polling (0: one look at each). */
  waitMs: number;
  flags: OutputFlags;
}

/**
 * `sitefleet status REPORT`: under the run's own lock (status rewrites the run's report and appends
 * to its journal, which a run still going, or a resume, must not have touched under it), looks at
 * every operation the report shows accepted. Returns the exit code.
 */
export async function followOperations(reportPath: string, globals: GlobalOptions, options: FollowOptions): Promise<number> {
  const report = readJsonFile(reportPath, { what: 'report', maxBytes: MAX_REPORT_BYTES, schema: 'report.schema.json' }).data as Report;
  // The report is rewritten in place: it must be a report, and no link (see util/output-file.ts).
  const start = { report: { flag: 'report', path: reportPath }, flags: options.flags, env: globals.io.env };
  checkCommandOutputs(globals, await outputFiles(start, REPORT_OUTPUTS), [journalOf(reportPath)]);
  const { scope, coordination } = runLockScope(reportPath, report);
  warnIfUncoordinated(coordination, globals);
  return RunScope.with(globals, { scope, command: `status ${reportPath}` }, (held) => checkOperations(held, reportPath, report, options));
}

/**
 * Looks at every accepted operation once at once, then (with a wait) through the same Watcher as a
 * run, until each ended or `waitMs` passed. Every answer goes to the journal as it arrives; the report
 * is rewritten at the end, also after Ctrl-C.
 */
async function checkOperations(scope: RunScope, reportPath: string, report: Report, { waitMs, flags }: FollowOptions): Promise<number> {
  const { globals, coordination } = scope;
  const journalPath = journalPathFor(reportPath);
  const journal = existsSync(journalPath) ? await Journal.open(journalPath) : undefined;
  const record = (r: ReportResult) => journal && r.step_id && journal.append({ t: 'update', step: r.step_id, result: stepResultOf(r), at: globals.io.now() });
  let interrupted = false;
  try {
    const ended: ReportResult[] = [];
    interrupted = await pollOpen(scope, report, waitMs, (r) => (ended.push(r), record(r)));
    // The writes that ended are read back as the run reads its own: a version that did not move is `not_updated`.
    const planned = journal ? readJournalBack(journalPath).start.plan : undefined;
    if (!scope.coordination.lost.aborted) await readBackEnded(scope.runtime().caller, report.company, ended, planned, stepResultOf, record);
  } finally {
    await journal?.close();
  }
  report.summary = summarize(report.results);
  // A staging step status saw end is recorded as a run's is (rollout.staging_first).
  await recordStagingOrWarn(scope, report.company, report.results);
  await recordWithheldOrWarn(scope, {
    company: report.company,
    runId: report.run_id,
    ended: writeEndsOfReport(report.results),
    runAt: Date.parse(report.started_at),
    breaks: reportBreaks(report),
  });
  const still = report.results.filter((r) => r.status === 'accepted').length;
  const { io } = globals;
  await finishRun(
    {
      report: { flag: 'report', path: reportPath, value: report },
      flags,
      env: io.env,
      io,
      quiet: globals.quiet === true,
      view: globals.view,
      after: still ? [`${still} operations still running: look again with \`sitefleet status ${reportPath} --wait\``] : [],
    },
    REPORT_OUTPUTS,
  );
  if (coordination.lost.aborted) {
    globals.io.stderr.write(`sitefleet: ${forTerminal((coordination.lost.reason as Error).message)}\n`);
    return EXIT.stopped;
  }
  return interrupted ? 130 : exitCodeOf(report);
}

/**
 * Polls the report's open operations through the scope's watcher until each ended, `waitMs` passed,
 * Ctrl-C, or the coordination was lost; folds each ending into its result and hands it to `ended`.
 * Returns whether Ctrl-C stopped it.
 */
async function pollOpen(scope: RunScope, report: Report, waitMs: number, ended: (r: ReportResult) => unknown): Promise<boolean> {
  const stop = sharedStop();
  const open = report.results.filter((r) => r.status === 'accepted' && r.operation_id);
  const progress = scope.globals.view.counter(open.length, 'operations ended');
  // The limit is the user's: polls still waiting for the rate budget when it passes are not sent.
  const deadline = waitMs > 0 ? setTimeout(() => stop.abort(), waitMs) : undefined;
  let interrupted = false;
  const restore = scope.onInterrupt(() => {
    interrupted = true;
    stop.abort();
  });
  // Redis gone: the shared budget can't be kept, so no more polls; what was learned is written.
  const { lost } = scope.coordination;
  const onLost = () => stop.abort();
  lost.addEventListener('abort', onLost, { once: true });
  const runtime = scope.runtime({ company: report.company });
  const watcher = scope.watcher(stop.signal);
  // Every open operation was accepted before the report was finished: one that the service still does
  // not show (404) may be new enough to be invisible yet, for what is left of the grace since then.
  const sinceFinished = Date.now() - Date.parse(report.finished_at);
  const notFoundGraceMs = Math.max(0, (runtime.tracking.notFoundGraceMs ?? DEFAULT_TRACKING.notFoundGraceMs) - (sinceFinished || 0));
  try {
    // Every watch ends before the journal and the runtime are let go, even when one of them failed.
    await allEnded(
      open.map(async (r) => {
        const tracked = await watcher.watch(r.operation_id!, r.action, { timeoutMs: waitMs, notFoundGraceMs, unknownAge: true }).done;
        if (apply(r, tracked)) {
          progress.step(r.status !== 'succeeded');
          await ended(r);
        }
      }),
    );
  } finally {
    clearTimeout(deadline);
    lost.removeEventListener('abort', onLost);
    restore();
    progress.end();
  }
  return interrupted;
}

/**
 * The lock the report's run took and the Redis it was coordinated through, if any: as its journal's
 * sealed start record says, else as the report records them (`lock`, in reports since it was added),
 * else the company's lock and no word of Redis. The address is only warned about, never connected to.
 */
export function runLockScope(reportPath: string, report: Report): { scope: LockScope; coordination?: string } {
  try {
    const { start } = readJournalBack(journalPathFor(reportPath));
    return { scope: lockScopeOf(start.plan), coordination: start.coordination };
  } catch {
    const settings = { lock: report.lock?.scope };
    return { scope: lockScopeOf({ company: report.company, name: report.name, settings }), coordination: report.lock?.coordination ?? undefined };
  }
}

/**
 * A report's result as the journal records it: the step's result fields, none of the report's own (the
 * plan's fields it repeats: a journal record carrying them is not one its reader takes back).
 */
function stepResultOf(r: ReportResult): StepResult {
  const { step_id, task: _t, action: _a, target: _g, request: _r, role: _o, wave: _w, ...rest } = r;
  const { precondition: _p, release_age: _l, withheld: _h, staging: _s, ...result } = rest;
  return { step_id: step_id!, ...result };
}

/** Folds what the watcher learned into the report's result; false when the operation is still running. */
function apply(r: ReportResult, tracked: Tracked): boolean {
  if (tracked.state === 'untracked' || (tracked.state === 'unknown' && tracked.timedOut)) {
    r.reason = tracked.state === 'untracked' && !/interrupted/.test(tracked.message) ? tracked.message : 'operation still in progress';
    return false;
  }
  Object.assign(r, operationEnd(r.action, tracked, null));
  return true;
}
