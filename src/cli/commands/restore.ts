import type { Command } from 'commander';
import type { GlobalOptions } from '../../app/runtime.js';
import { REPORT_OUTPUTS } from '../../app/finish-run.js';
import { addOutputOptions } from './run-flags.js';
import type { RestoreOptions } from '../../app/restore-run.js';

export function registerRestore(program: Command): void {
  const command = program
    .command('restore')
    .description("put back the sites a run's failed writes broke, from the restore points that run took (backup_first)")
    .argument('<report>', 'the report path the run was given (its journal sits beside it)')
    .option('--steps <ids...>', 'only these step ids (default: every write that broke its site; a refused write only when named here)')
    .option('--dry-run', 'list each site, backup id, tag and age, and send nothing')
    .option('-y, --yes', 'do not ask for confirmation')
    .option('--wait-lock', 'wait for the lock instead of exiting 4');
  addOutputOptions(command, REPORT_OUTPUTS)
    .addHelpText(
      'after',
      '\nA restore puts back the whole site as it was at its backup: orders, comments and form entries since then are lost.\n' +
        'Only the backup the run took for that environment is used, and only if the service still lists it under its tag;\n' +
        'a site the task checks must still be broken. Exit 0 when every broken site is restored, 1 when one is left so.\n' +
        "Each restore is recorded in the run's journal: a second restore of the same report sends nothing already restored,\n" +
        'and one that may have reached the service is never sent again.\n\nExample:\n  sitefleet restore /var/log/sitefleet/themes.json --dry-run\n',
    )
    .action(async (reportPath: string, opts: RestoreOptions, command: Command) => {
      const globals = command.optsWithGlobals<GlobalOptions>();
      const { restoreRun } = await import('../../app/restore-run.js');
      globals.io.exitCode = await restoreRun(reportPath, globals, opts);
    });
}
