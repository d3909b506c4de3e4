import { Option, type Command } from 'commander';
import { LONGEST_AGE } from '../../util/duration.js';
import { durationFlag } from '../parse.js';
import type { GlobalOptions } from '../../app/runtime.js';
import type { BackupsOptions } from './backups-table.js';
import { addSelectorFlags } from '../selector-flags.js';

export function registerBackups(program: Command): void {
  addSelectorFlags(
    program
      .command('backups')
      .description('the newest backup of each type for every selected environment, with its age; sends no write')
      .option('--max-age <duration>', 'exit 1 when an environment has no backup younger than this, e.g. 26h')
      .addOption(new Option('--format <format>', 'output format').choices(['table', 'json', 'csv']).default('table')),
  )
    .addHelpText(
      'after',
      '\nThe morning check after a nightly backup job, usable from monitoring: exit 0 when every selected environment\nhas a backup younger than --max-age, 1 when some have none (they are listed), 2 for bad input.\n\nExample:\n  sitefleet backups --environment live --max-age 26h\n',
    )
    .action(async (opts: BackupsOptions, command: Command) => {
      const maxAgeMs =
        opts.maxAge === undefined ? undefined : durationFlag('--max-age', opts.maxAge, { max: LONGEST_AGE.backupAge, example: '26h or 2d', kind: 'age' });
      const { showBackups } = await import('./backups-table.js');
      const globals = command.optsWithGlobals<GlobalOptions>();
      globals.io.exitCode = await showBackups(globals, opts, maxAgeMs);
    });
}
