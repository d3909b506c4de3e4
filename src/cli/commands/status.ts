import type { Command } from 'commander';
import type { Report } from '../../report/report.js';
import { DEFAULT_TRACKING } from '../../run/watcher.js';
import { LONGEST } from '../../util/duration.js';
import { durationOption } from '../parse.js';
import type { GlobalOptions } from '../../app/context.js';
import { checkCommandOutputs, journalOf } from '../../app/output-check.js';
import { outputFiles, REPORT_OUTPUTS, type OutputFlags } from '../../app/finish-run.js';
import { addOutputOptions } from './run-flags.js';

interface StatusOptions extends OutputFlags {
  wait?: boolean | number;
}

/** A report of 50,000 steps is some 60 MB of JSON; past this it is not a report sitefleet wrote. */
const MAX_REPORT_BYTES = 512 << 20;

export function registerStatus(program: Command): void {
  const command = program
    .command('status')
    .description('poll the operations a report shows as accepted and update the report in place')
    .argument('<report>', 'a report written by `sitefleet run`')
    .option(
      '--wait [timeout]',
      `keep polling until every operation ended, or the timeout (default 30m, at most ${LONGEST.operationWait}) passes`,
      durationOption('--wait', LONGEST.operationWait, '10m'),
    );
  addOutputOptions(command, REPORT_OUTPUTS)
    .addHelpText(
      'after',
      '\nAccepted operations become succeeded or failed; those still running stay accepted.\nThe report is replaced atomically; the run’s journal, if beside it, records the news too.\nCtrl-C stops polling and keeps every answer already received.\n\nExample:\n  sitefleet status sitefleet-report-2026-11-22T02-00-00-000Z.json --wait 10m\n',
    )
    .action(async (reportPath: string, opts: StatusOptions, command: Command) => {
      const globals = command.optsWithGlobals<GlobalOptions>();
      const { readJsonFile } = await import('../../util/json-input.js');
      const report = readJsonFile(reportPath, { what: 'report', maxBytes: MAX_REPORT_BYTES, schema: 'report.schema.json' }).data as Report;
      const waitMs = opts.wait === undefined || opts.wait === false ? 0 : opts.wait === true ? DEFAULT_TRACKING.timeoutMs : opts.wait;
      const [{ checkOperations, runLockScope }, { warnIfUncoordinated, withRunLock }] = await Promise.all([
        import('../../app/status-check.js'),
        import('../../app/session.js'),
      ]);
      // The report is rewritten in place: it must be a report, and no link (see util/output-file.ts).
      checkCommandOutputs(globals, await outputFiles({ report: { flag: 'report', path: reportPath }, flags: opts, env: globals.io.env }, REPORT_OUTPUTS), [
        journalOf(reportPath),
      ]);
      const { scope, coordination } = runLockScope(reportPath, report);
      warnIfUncoordinated(coordination, globals);
      // The run's lock: status rewrites the run's report and appends to its journal, which a run still
      // going (or a resume) must not have touched under it. A run that is going follows its own operations.
      globals.io.exitCode = await withRunLock(globals, scope, `status ${reportPath}`, false, (coordination) =>
        checkOperations(reportPath, report, { waitMs, flags: opts }, globals, coordination),
      );
    });
}
