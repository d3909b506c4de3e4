import { releaseClock } from './release-clock.js';
import { exposureOf, type Exposure } from '../inventory/exposure.js';
import type { Inventory } from '../inventory/inventory.js';
import { inventoryReader, readInventory } from '../inventory/read.js';
import { attachSiteIds, loadSitesFile } from '../inventory/sites.js';
import type { GlobalOptions } from './runtime.js';
import { withRuntime } from './run-scope.js';

/**
 * `sitefleet inventory`: the fleet as the theme listing shows it (GETs only), with the site ids the
 * sites file gives. With `exposure`, the vulnerable versions per theme and, as a run would judge them
 * under `minReleaseAge`, when each update becomes eligible.
 */
export async function readFleetView(
  globals: GlobalOptions & { company: string },
  exposure?: { minReleaseAge?: string },
): Promise<{ inventory: Inventory; exposure?: Exposure }> {
  const sites = globals.sites ? loadSitesFile(globals.sites) : undefined;
  return withRuntime(globals, globals.company, async (runtime) => {
    const inventory = await readInventory(inventoryReader(runtime.caller), globals.company);
    if (sites) attachSiteIds(inventory, sites);
    if (!exposure) return { inventory };
    // Reading the listing is a sighting like any other: recorded, so the dates shown are the ones a run judges by.
    const clock = await releaseClock(runtime.coordination, inventory, globals.io.now());
    const policy = exposure.minReleaseAge === undefined ? {} : { min_release_age: exposure.minReleaseAge };
    return { inventory, exposure: exposureOf(inventory, { clock, policy }) };
  });
}
