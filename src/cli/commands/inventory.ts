import { Option, type Command } from 'commander';
import { EXIT, InvalidInputError } from '../../errors.js';
import type { GlobalOptions } from '../../app/runtime.js';
import { durationFlag } from '../parse.js';
import { LONGEST_AGE } from '../../util/duration.js';

interface InventoryOptions {
  format: 'table' | 'json' | 'csv';
  exposure?: boolean;
  failOn?: 'vulnerable';
  minReleaseAge?: string;
  eachEnvironment?: boolean;
}

export function registerInventory(program: Command): void {
  program
    .command('inventory')
    .description('list every environment as the item listings show it: site, name, themes and plugins, versions, updates')
    .addOption(new Option('--format <format>', 'output format').choices(['table', 'json', 'csv']).default('table'))
    .option('--exposure', 'per theme and plugin, the environments running a version flagged vulnerable, and whether a safe update is available')
    .option('--each-environment', "where the service serves no company plugin listing, read each environment's own (one read each, through the rate budget)")
    .addOption(
      new Option('--fail-on <what>', 'with --exposure: exit 1 when an environment runs a vulnerable version that has a safe update').choices(['vulnerable']),
    )
    .option(
      '--min-release-age <age>',
      'with --exposure: when each update becomes eligible under this min_release_age (3d); fixes of vulnerable versions go at once, as release_age_bypass: vulnerable',
      (text: string) => (durationFlag('--min-release-age', text, { max: LONGEST_AGE.releaseAge, example: '3d', kind: 'age' }), text),
    )
    .addHelpText(
      'after',
      '\nWith --exposure --fail-on vulnerable, for monitoring: exit 0 when no environment runs a vulnerable theme or plugin version\nthat a safe update (one not flagged vulnerable itself) would fix, 1 when some do, 2 for bad input.\n\nExamples:\n  sitefleet inventory --company 0f1e2d3c-… --format csv > fleet.csv\n  sitefleet inventory --exposure --fail-on vulnerable\n',
    )
    .action(async (opts: InventoryOptions, command: Command) => {
      const globals = command.optsWithGlobals<GlobalOptions>();
      if (!globals.company) throw new InvalidInputError([{ path: 'company', message: 'no company: set SITEFLEET_COMPANY or pass --company' }]);
      for (const [flag, given] of [
        ['--fail-on', opts.failOn],
        ['--min-release-age', opts.minReleaseAge],
      ] as const)
        if (given !== undefined && !opts.exposure) throw new InvalidInputError([{ path: flag, message: 'judges the exposure view: add --exposure' }]);
      const { readFleetView } = await import('../../app/fleet-view.js');
      const view = await readFleetView({ ...globals, company: globals.company }, opts.exposure ? { minReleaseAge: opts.minReleaseAge } : undefined, {
        eachEnvironment: opts.eachEnvironment === true,
      });
      if (!view.exposure) {
        const { renderInventory } = await import('../render.js');
        globals.io.stdout.write(`${renderInventory(view.inventory, opts.format)}\n`);
        return;
      }
      const { renderExposure } = await import('../render-exposure.js');
      globals.io.stdout.write(`${renderExposure(view.exposure, opts.format)}\n`);
      // A kind that could not be read is not known safe: monitoring fails on it as on a fixable exposure.
      if (opts.failOn === 'vulnerable' && (view.exposure.fixable_environments > 0 || view.exposure.unchecked !== undefined))
        globals.io.exitCode = EXIT.someFailed;
    });
}
