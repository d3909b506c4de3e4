import { existsSync, readFileSync } from 'node:fs';
import type { Command } from 'commander';
import { exitCodeOf, summarize, writeJsonAtomic, type Report, type ReportResult } from '../../report/report.js';
import { Journal, journalPathFor } from '../../run/journal.js';
import { DEFAULT_TRACKING, Watcher, type Tracked } from '../../run/watcher.js';
import { parseDuration } from '../../util/duration.js';
import { createRuntime, UsageError, type GlobalOptions } from '../context.js';
import { Progress } from '../progress.js';
import { renderSummary } from '../render.js';
import { onInterrupt } from '../signals.js';

export function registerStatus(program: Command): void {
  program
    .command('status')
    .description('poll the operations a report shows as accepted and update the report in place')
    .argument('<report>', 'a report written by `sitefleet run`')
    .option('--wait [timeout]', 'keep polling until every operation ended, or the timeout (default 30m) passes')
    .addHelpText(
      'after',
      '\nAccepted operations become succeeded or failed; those still running stay accepted.\nThe report is replaced atomically; the run’s journal, if beside it, records the news too.\nCtrl-C stops polling and keeps every answer already received.\n\nExample:\n  sitefleet status sitefleet-report-2026-11-22T02-00-00-000Z.json --wait 10m\n',
    )
    .action(async (reportPath: string, opts: { wait?: boolean | string }, command: Command) => {
      const globals = command.optsWithGlobals<GlobalOptions>();
      let report: Report;
      try {
        report = JSON.parse(readFileSync(reportPath, 'utf8')) as Report;
      } catch (error) {
        throw new UsageError(`cannot read the report ${reportPath}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`);
      }
      const waitMs = opts.wait === undefined || opts.wait === false ? 0 : opts.wait === true ? DEFAULT_TRACKING.timeoutMs : parseDuration(opts.wait);
      if (waitMs === undefined) throw new UsageError('--wait takes a duration such as 10m');
      process.exitCode = await checkOperations(reportPath, report, waitMs, globals);
    });
}

/**
 * Looks at every accepted operation once at once, then (with a wait) through the same Watcher as a
 * run, until each ended or `waitMs` passed. Every answer goes to the journal as it arrives; the report
 * is rewritten at the end, also after Ctrl-C.
 */
async function checkOperations(reportPath: string, report: Report, waitMs: number, globals: GlobalOptions): Promise<number> {
  const runtime = createRuntime(globals);
  const journal = existsSync(journalPathFor(reportPath)) ? await Journal.open(journalPathFor(reportPath)) : undefined;
  const stop = new AbortController();
  const open = report.results.filter((r) => r.status === 'accepted' && r.operation_id);
  const progress = new Progress(open.length, process.stderr, !globals.quiet && process.stderr.isTTY === true, 'operations ended');
  // The limit is the user's: polls still waiting for the rate budget when it passes are not sent.
  const deadline = waitMs > 0 ? setTimeout(() => stop.abort(), waitMs) : undefined;
  let interrupted = false;
  const restore = onInterrupt(() => {
    interrupted = true;
    stop.abort();
  });
  const watcher = new Watcher((id, o) => runtime.caller.poll(id, o), {
    signal: stop.signal,
    firstPollMs: runtime.tracking.intervalMs,
    maxIntervalMs: runtime.tracking.maxIntervalMs,
  });
  try {
    await Promise.all(
      open.map(async (r) => {
        const tracked = await watcher.watch(r.operation_id!, r.action, { timeoutMs: waitMs, notFoundGraceMs: 0, unknownAge: true }).done;
        if (apply(r, tracked)) {
          progress.step(r.status !== 'succeeded');
          if (journal && r.step_id) {
            const { step_id, status, http_status, operation_id, attempts, error, reason } = r;
            await journal.append({
              t: 'update',
              step: step_id,
              result: { step_id, status, http_status, operation_id, attempts, error, reason },
              at: Date.now(),
            });
          }
        }
      }),
    );
  } finally {
    clearTimeout(deadline);
    restore();
    progress.end();
    await journal?.close();
    await runtime.close();
  }
  report.summary = summarize(report.results);
  writeJsonAtomic(reportPath, report);
  const still = report.results.filter((r) => r.status === 'accepted').length;
  if (!globals.quiet) {
    const next = still ? `${still} operations still running: look again with \`sitefleet status ${reportPath} --wait\`\n` : '';
    process.stdout.write(`${renderSummary(report, reportPath)}\n${next}`);
  }
  return interrupted ? 130 : exitCodeOf(report);
}

/** Folds what the watcher learned into the report's result; false when the operation is still running. */
function apply(r: ReportResult, tracked: Tracked): boolean {
  if (tracked.state === 'untracked' || (tracked.state === 'unknown' && tracked.timedOut)) {
    r.reason = tracked.state === 'untracked' && !/interrupted/.test(tracked.message) ? tracked.message : 'operation still in progress';
    return false;
  }
  r.status = tracked.state;
  r.reason = tracked.state === 'succeeded' ? null : tracked.state === 'failed' ? `operation failed: ${tracked.message}` : tracked.message;
  return true;
}
