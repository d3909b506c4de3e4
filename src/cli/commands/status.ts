import { existsSync, readFileSync } from 'node:fs';
import type { Command } from 'commander';
import { exitCodeOf, summarize, writeJsonAtomic, type Report } from '../../report/report.js';
import { Journal, journalPathFor } from '../../run/journal.js';
import { DEFAULT_TRACKING, trackOperation } from '../../run/track.js';
import { createRuntime, UsageError, type GlobalOptions } from '../context.js';
import { renderSummary } from '../render.js';
import { parseDuration } from '../../util/duration.js';

export function registerStatus(program: Command): void {
  program
    .command('status')
    .description('poll the operations a report shows as accepted and update the report in place')
    .argument('<report>', 'a report written by `sitefleet run`')
    .option('--wait [timeout]', 'keep polling until every operation ended, or the timeout (default 30m) passes')
    .addHelpText('after', '\nAccepted operations become succeeded or failed; those still running stay accepted.\nThe report is replaced atomically; the run’s journal, if beside it, records the news too.\n\nExample:\n  sitefleet status sitefleet-report-2026-11-22T02-00-00-000Z.json --wait 10m\n')
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
      const runtime = createRuntime(globals);
      const journal = existsSync(journalPathFor(reportPath)) ? await Journal.open(journalPathFor(reportPath), { exclusive: false }) : undefined;
      try {
        const open = report.results.filter((r) => r.status === 'accepted' && r.operation_id);
        await Promise.all(
          open.map(async (r) => {
            const tracked = await trackOperation(runtime.caller, r.operation_id!, { ...DEFAULT_TRACKING, ...runtime.tracking, timeoutMs: waitMs, notFoundGraceMs: 0 });
            if (tracked.state === 'untracked' || (tracked.state === 'unknown' && tracked.timedOut)) {
              r.reason = tracked.state === 'untracked' ? tracked.message : 'operation still in progress';
              return;
            }
            r.status = tracked.state;
            r.reason = tracked.state === 'succeeded' ? null : tracked.state === 'failed' ? `operation failed: ${tracked.message}` : tracked.message;
            if (journal && r.step_id) {
              const { step_id, status, http_status, operation_id, attempts, error, reason } = r;
              await journal.append({ t: 'update', step: step_id, result: { step_id, status, http_status, operation_id, attempts, error, reason }, at: Date.now() });
            }
          }),
        );
        report.summary = summarize(report.results);
        writeJsonAtomic(reportPath, report);
        const still = report.results.filter((r) => r.status === 'accepted').length;
        if (!globals.quiet) process.stdout.write(`${renderSummary(report, reportPath)}\n${still ? `${still} operations still running\n` : ''}`);
        process.exitCode = exitCodeOf(report);
      } finally {
        await journal?.close();
        await runtime.close();
      }
    });
}
