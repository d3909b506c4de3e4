import type { Command } from 'commander';
import type { GlobalOptions } from '../../app/runtime.js';
import { addOutputOptions, addWindowOptions, EXIT_CODES_HELP } from './run-flags.js';
import { DEFAULT_MAX_PLAN_AGE, type RunOptions } from '../../app/run-options.js';
import { durationOption } from '../parse.js';
import { LONGEST } from '../../util/duration.js';

export function registerRun(program: Command): void {
  const command = program
    .command('run')
    .description('plan from the live fleet, then send the calls under the rate limit and write a JSON report')
    .argument('[playbook]', 'playbook file (with --plan: default, the one the plan names)')
    .option('--plan <file>', 'apply a plan saved by `plan --out`: its steps whose precondition still holds, and no others')
    .option('--strict-plan', 'with --plan: if anything changed since the plan, send nothing (exit 2) instead of dropping those steps')
    .option(
      '--max-plan-age <duration>',
      `with --plan: refuse a plan older than this (default ${DEFAULT_MAX_PLAN_AGE}, at most ${LONGEST.planAge})`,
      durationOption('--max-plan-age', LONGEST.planAge, '24h or 90m'),
    )
    .option('--dry-run', 'do exactly what `plan` does and write the report with every step "planned"')
    .option('--report <file>', 'where the report goes (default: sitefleet-report-<timestamp>.json); the journal goes beside it')
    .option('-y, --yes', 'do not ask for confirmation (needed when not on a terminal)')
    .option('-v, --verbose', 'list every call of the plan before running')
    .option('--wait', 'poll every operation until it finished (as settings.wait: true)')
    .option('--wait-lock', 'if another run holds the company lock, wait for it instead of exiting 4')
    .option('--no-preflight', 'skip the look at the company’s API keys (a warning when one expires within 7 days)');
  addWindowOptions(addOutputOptions(command))
    .addHelpText(
      'after',
      `${EXIT_CODES_HELP}\nExample:\n  SITEFLEET_TOKEN=… sitefleet run playbooks/nightly-backups.yaml --yes --report /var/log/sitefleet/backups.json\n`,
    )
    .action(async (file: string | undefined, opts: RunOptions, command: Command) => {
      const { runPlaybook } = await import('../../app/run-playbook.js');
      const globals = command.optsWithGlobals<GlobalOptions>();
      const { exitCode } = await runPlaybook(file, globals, opts);
      globals.io.exitCode = exitCode;
    });
}
