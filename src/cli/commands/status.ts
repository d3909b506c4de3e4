import type { Command } from 'commander';
import { DEFAULT_TRACKING } from '../../run/watcher.js';
import { LONGEST } from '../../util/duration.js';
import { durationOption } from '../parse.js';
import type { GlobalOptions } from '../../app/runtime.js';
import { REPORT_OUTPUTS, type OutputFlags } from '../../app/finish-run.js';
import { addOutputOptions } from './run-flags.js';

interface StatusOptions extends OutputFlags {
  wait?: boolean | number;
}

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
      const waitMs = opts.wait === undefined || opts.wait === false ? 0 : opts.wait === true ? DEFAULT_TRACKING.timeoutMs : opts.wait;
      const { followOperations } = await import('../../app/status-check.js');
      globals.io.exitCode = await followOperations(reportPath, globals, { waitMs, flags: opts });
    });
}
