import { existsSync } from 'node:fs';
import { exitCodeOf, summarize, type Report, type ReportResult } from '../report/report.js';
import { Journal, journalPathFor } from '../run/journal.js';
import { readJournalBack } from '../run/journal-read-back.js';
import { lockScopeOf } from '../coord/file-lock.js';
import type { Coordination, LockScope } from '../coord/types.js';
import { DEFAULT_TRACKING, watcherFor, type Tracked } from '../run/watcher.js';
import { operationEnd } from '../run/operation-end.js';
import type { StepResult } from '../run/types.js';
import { forTerminal } from '../util/safe-text.js';
import { EXIT } from '../errors.js';
import { createRuntime, type GlobalOptions } from './context.js';
import { finishRun, REPORT_OUTPUTS, type OutputFlags } from './finish-run.js';
import { onInterrupt } from './signals.js';

/**
 * Looks at every accepted operation once at once, then (with a wait) through the same Watcher as a
 * run, until each ended or `waitMs` passed. Every answer goes to the journal as it arrives; the report
 * is rewritten at the end, also after Ctrl-C.
 */
export async function checkOperations(
  reportPath: string,
  report: Report,
  { waitMs, flags }: { waitMs: number; flags: OutputFlags },
  globals: GlobalOptions,
  coordination: Coordination,
): Promise<number> {
  const runtime = createRuntime(globals, { coordination, company: report.company });
  const journal = existsSync(journalPathFor(reportPath)) ? await Journal.open(journalPathFor(reportPath)) : undefined;
  const stop = new AbortController();
  const open = report.results.filter((r) => r.status === 'accepted' && r.operation_id);
  const progress = globals.view.counter(open.length, 'operations ended');
  // The limit is the user's: polls still waiting for the rate budget when it passes are not sent.
  const deadline = waitMs > 0 ? setTimeout(() => stop.abort(), waitMs) : undefined;
  let interrupted = false;
  const restore = onInterrupt(globals.io, () => {
    interrupted = true;
    stop.abort();
  });
  // Redis gone: the shared budget can't be kept, so no more polls; what was learned is written.
  const onLost = () => stop.abort();
  coordination.lost.addEventListener('abort', onLost, { once: true });
  const watcher = watcherFor(runtime.caller, runtime.tracking, stop.signal);
  // Every open operation was accepted before the report was finished: one that the service still does
  // not show (404) may be new enough to be invisible yet, for what is left of the grace since then.
  const sinceFinished = Date.now() - Date.parse(report.finished_at);
  const notFoundGraceMs = Math.max(0, (runtime.tracking.notFoundGraceMs ?? DEFAULT_TRACKING.notFoundGraceMs) - (sinceFinished || 0));
  try {
    await Promise.all(
      open.map(async (r) => {
        const tracked = await watcher.watch(r.operation_id!, r.action, { timeoutMs: waitMs, notFoundGraceMs, unknownAge: true }).done;
        if (apply(r, tracked)) {
          progress.step(r.status !== 'succeeded');
          if (journal && r.step_id) await journal.append({ t: 'update', step: r.step_id, result: stepResultOf(r), at: Date.now() });
        }
      }),
    );
  } finally {
    clearTimeout(deadline);
    coordination.lost.removeEventListener('abort', onLost);
    restore();
    progress.end();
    await journal?.close();
    await runtime.close();
  }
  report.summary = summarize(report.results);
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

/** A report's result as the journal records it: the step's result fields, none of the report's own. */
function stepResultOf(r: ReportResult): StepResult {
  const { step_id, task: _task, action: _action, target: _target, request: _request, role: _role, ...result } = r;
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
