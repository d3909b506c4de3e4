import { Option, type Command } from 'commander';
import { InvalidInputError } from '../../errors.js';
import type { GlobalOptions } from '../context.js';

export function registerInventory(program: Command): void {
  program
    .command('inventory')
    .description('list every environment as the theme listing shows it: site, name, themes, versions, updates')
    .addOption(new Option('--format <format>', 'output format').choices(['table', 'json', 'csv']).default('table'))
    .addHelpText('after', '\nExample:\n  sitefleet inventory --company 0f1e2d3c-… --format csv > fleet.csv\n')
    .action(async (opts: { format: 'table' | 'json' | 'csv' }, command: Command) => {
      const globals = command.optsWithGlobals<GlobalOptions>();
      if (!globals.company) throw new InvalidInputError([{ path: 'company', message: 'no company: set SITEFLEET_COMPANY or pass --company' }]);
      const [{ openRuntime }, { inventoryReader, readInventory }, { renderInventory }, { attachSiteIds, loadSitesFile }] = await Promise.all([
        import('../context.js'),
        import('../../inventory/read.js'),
        import('../render.js'),
        import('../../inventory/sites.js'),
      ]);
      const sites = globals.sites ? loadSitesFile(globals.sites) : undefined;
      const runtime = await openRuntime(globals, globals.company);
      try {
        const inventory = await readInventory(inventoryReader(runtime.caller), globals.company);
        if (sites) attachSiteIds(inventory, sites);
        globals.io.stdout.write(`${renderInventory(inventory, opts.format)}\n`);
      } finally {
        await runtime.close();
      }
    });
}
