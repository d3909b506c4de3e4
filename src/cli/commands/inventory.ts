import { Option, type Command } from 'commander';
import { EXIT, InvalidInputError } from '../../errors.js';
import type { GlobalOptions } from '../../app/context.js';

interface InventoryOptions {
  format: 'table' | 'json' | 'csv';
  exposure?: boolean;
  failOn?: 'vulnerable';
}

export function registerInventory(program: Command): void {
  program
    .command('inventory')
    .description('list every environment as the theme listing shows it: site, name, themes, versions, updates')
    .addOption(new Option('--format <format>', 'output format').choices(['table', 'json', 'csv']).default('table'))
    .option('--exposure', 'per theme, the environments running a version flagged vulnerable, and whether a safe update is available')
    .addOption(
      new Option('--fail-on <what>', 'with --exposure: exit 1 when an environment runs a vulnerable version that has a safe update').choices(['vulnerable']),
    )
    .addHelpText(
      'after',
      '\nWith --exposure --fail-on vulnerable, for monitoring: exit 0 when no environment runs a vulnerable theme version\nthat a safe update (one not flagged vulnerable itself) would fix, 1 when some do, 2 for bad input.\n\nExamples:\n  sitefleet inventory --company 0f1e2d3c-… --format csv > fleet.csv\n  sitefleet inventory --exposure --fail-on vulnerable\n',
    )
    .action(async (opts: InventoryOptions, command: Command) => {
      const globals = command.optsWithGlobals<GlobalOptions>();
      if (!globals.company) throw new InvalidInputError([{ path: 'company', message: 'no company: set SITEFLEET_COMPANY or pass --company' }]);
      if (opts.failOn && !opts.exposure) throw new InvalidInputError([{ path: '--fail-on', message: 'judges the exposure view: add --exposure' }]);
      const [{ withRuntime }, { inventoryReader, readInventory }, { attachSiteIds, loadSitesFile }] = await Promise.all([
        import('../../app/run-scope.js'),
        import('../../inventory/read.js'),
        import('../../inventory/sites.js'),
      ]);
      const sites = globals.sites ? loadSitesFile(globals.sites) : undefined;
      const inventory = await withRuntime(globals, globals.company, (runtime) => readInventory(inventoryReader(runtime.caller), globals.company!));
      if (sites) attachSiteIds(inventory, sites);
      {
        if (!opts.exposure) {
          const { renderInventory } = await import('../render.js');
          globals.io.stdout.write(`${renderInventory(inventory, opts.format)}\n`);
          return;
        }
        const [{ exposureOf }, { renderExposure }] = await Promise.all([import('../../inventory/exposure.js'), import('../render-exposure.js')]);
        const exposure = exposureOf(inventory);
        globals.io.stdout.write(`${renderExposure(exposure, opts.format)}\n`);
        if (opts.failOn === 'vulnerable' && exposure.fixable_environments > 0) globals.io.exitCode = EXIT.someFailed;
      }
    });
}
