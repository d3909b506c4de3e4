import { Option, type Command } from 'commander';
import { LONGEST_AGE } from '../../util/duration.js';
import { durationFlag } from '../parse.js';
import type { GlobalOptions } from '../../app/runtime.js';
import type { DoctorOptions } from '../../app/doctor/checks.js';

export function registerDoctor(program: Command): void {
  program
    .command('doctor')
    .description(
      'check, without writing anything, what a scheduled run needs: the service, the token, the company, folders, API keys, and a playbook’s channels',
    )
    .argument('[playbook]', 'also check its ping, webhooks and metrics file (nothing is sent to them)')
    .option('--ping <url>', "check this ping URL as run --ping would use it ('${VAR}' reads it from the environment)")
    .option('--metrics-file <file>', 'check that this metrics file can be written')
    .option('--expiry-warning <duration>', 'warn about active API keys that expire within this time', '14d')
    .option('--report-dir <dir>', 'the folder reports will be written to', '.')
    .option('--strict', 'exit 1 on a warning')
    .addOption(new Option('--format <format>', 'output format').choices(['text', 'json']).default('text'))
    .addHelpText(
      'after',
      '\nOne line per check: ok, warn or fail. Exit 0; 1 on a warning with --strict; 3 on a failure.\n\nExample:\n  sitefleet doctor playbooks/nightly-backups.yaml --expiry-warning 30d --strict\n',
    )
    .action(async (file: string | undefined, opts: DoctorOptions, command: Command) => {
      const warnMs = durationFlag('--expiry-warning', opts.expiryWarning, { max: LONGEST_AGE.expiryWarning, example: '14d', kind: 'age' });
      const { runDoctor } = await import('../../app/doctor/checks.js');
      const globals = command.optsWithGlobals<GlobalOptions>();
      globals.io.exitCode = await runDoctor(globals, opts, warnMs, file);
    });
}
