import type { Command } from 'commander';
import { UsageError } from '../../errors.js';
import type { GlobalOptions } from '../../app/runtime.js';
import type { ResumeOptions } from '../../app/resume-run.js';
import { addOutputOptions, addWindowOptions, EXIT_CODES_HELP } from './run-flags.js';

export function registerResume(program: Command): void {
  const command = program
    .command('resume')
    .description('continue an interrupted run from its journal: send what was never sent, leave what ended alone')
    .argument('<report>', 'the report path the run was given (its journal sits beside it)')
    .option('-y, --yes', 'do not ask for confirmation')
    .option('--wait', 'poll every operation until it finished, including those accepted before the interruption')
    .option('--wait-lock', 'wait for the company lock instead of exiting 4')
    .option('--max-failures <budget>', 'override the failure budget (a count, or a percentage such as 10%)');
  addWindowOptions(addOutputOptions(command))
    .addHelpText(
      'after',
      `\nSteps sent without an answer are sent again only when that is safe (PUTs, state-setting POSTs);\ncreating calls (backups, WP-CLI, domains, DNS records, environments, sites) stay unknown for a person to check.\n${EXIT_CODES_HELP}\nExample:\n  sitefleet resume /var/log/sitefleet/backups.json --yes\n`,
    )
    .action(async (reportPath: string, opts: ResumeOptions, command: Command) => {
      const globals = command.optsWithGlobals<GlobalOptions>();
      if (opts.maxFailures !== undefined && !/^(\d+|(100|\d{1,2})(\.\d+)?%)$/.test(opts.maxFailures))
        throw new UsageError('--max-failures takes a count or a percentage such as 10%');
      const { resumeRun } = await import('../../app/resume-run.js');
      globals.io.exitCode = await resumeRun(reportPath, globals, opts);
    });
}
