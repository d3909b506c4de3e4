import { readFileSync } from 'node:fs';
import type { Command } from 'commander';
import type { Report } from '../../report/report.js';
import { DEFAULT_TRACKING } from '../../run/watcher.js';
import { parseDuration } from '../../util/duration.js';
import { UsageError } from '../../errors.js';
import type { GlobalOptions } from '../context.js';
import { checkCommandOutputs, journalOf } from '../output-check.js';

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
      const [{ checkOperations, runLockScope }, { warnIfUncoordinated, withRunLock }] = await Promise.all([
        import('./status-check.js'),
        import('../session.js'),
      ]);
      // The report is rewritten in place: it must be a report, and no link (see util/output-file.ts).
      checkCommandOutputs(globals, [{ flag: 'report', path: reportPath, kind: 'report' }], [journalOf(reportPath)]);
      const { scope, coordination } = runLockScope(reportPath, report);
      warnIfUncoordinated(coordination, globals);
      // The run's lock: status rewrites the run's report and appends to its journal, which a run still
      // going (or a resume) must not have touched under it. A run that is going follows its own operations.
      process.exitCode = await withRunLock(globals, scope, `status ${reportPath}`, false, (coordination) =>
        checkOperations(reportPath, report, waitMs, globals, coordination),
      );
    });
}
