import { releaseClock } from './release-clock.js';
import { exposureOf, type Exposure } from '../inventory/exposure.js';
import type { Inventory } from '../inventory/inventory.js';
import { HttpError, readingFirst } from '../errors.js';
import { type Kind, OTHER_KINDS } from '../inventory/kinds.js';
import { inventoryReader, readEnvironmentItems, readInventory, readKind, type InventoryReader } from '../inventory/read.js';
import { attachSiteIds, loadSitesFile } from '../inventory/sites.js';
import type { GlobalOptions } from './runtime.js';
import { withRuntime } from './run-scope.js';

/**
 * A kind besides themes, from its company listing or else each environment's own. Where the service
 * serves neither (404), the view shows the rest and says why the kind is missing: a fleet view is
 * still worth having without it (a plan that updates that kind stops instead).
 */
async function readOtherKind(reader: InventoryReader, inventory: Inventory, kind: Kind, eachEnvironment: boolean): Promise<void> {
  try {
    await readKind(reader, inventory, kind);
    const why = inventory.listed[kind]?.from_environments;
    if (why && !eachEnvironment) {
      // One read per environment through the budget: for a large fleet that is long, so only when asked.
      const reads = inventory.environments.length;
      inventory.listed[kind] = {
        count: 0,
        unavailable: `${why}; reading each environment's own listing takes ${reads} reads: pass --each-environment to read them`,
      };
      return;
    }
    if (why)
      await readEnvironmentItems(
        reader,
        inventory,
        kind,
        inventory.environments.map((e) => e.id),
      );
  } catch (error) {
    if (!(error instanceof HttpError && error.status === 404)) throw error;
    for (const env of inventory.environments) delete env.items[kind];
    inventory.listed[kind] = { count: 0, unavailable: `the service serves no ${kind} listing, of the company or of an environment (${error.message})` };
  }
}

/**
 * `sitefleet inventory`: the fleet as the item listings show it (GETs only: themes, then every other
 * kind, each environment's own listing where a kind's company listing cannot be used), with the site
 * ids the sites file gives. With `exposure`, the vulnerable versions per item and, as a run would
 * judge them under `minReleaseAge`, when each update becomes eligible.
 */
export async function readFleetView(
  globals: GlobalOptions & { company: string },
  exposure?: { minReleaseAge?: string },
  { eachEnvironment = false }: { eachEnvironment?: boolean } = {},
): Promise<{ inventory: Inventory; exposure?: Exposure }> {
  const sites = globals.sites ? loadSitesFile(globals.sites) : undefined;
  return withRuntime(globals, globals.company, async (runtime) => {
    const reader = inventoryReader(runtime.caller);
    const inventory = await readingFirst({ baseUrl: globals.baseUrl, company: globals.company }, () => readInventory(reader, globals.company));
    for (const kind of OTHER_KINDS) await readOtherKind(reader, inventory, kind, eachEnvironment);
    if (sites) attachSiteIds(inventory, sites);
    if (!exposure) return { inventory };
    // Reading the listing is a sighting like any other: recorded, so the dates shown are the ones a run judges by.
    const clock = await releaseClock(runtime.coordination, inventory, globals.io.now());
    const policy = exposure.minReleaseAge === undefined ? {} : { min_release_age: exposure.minReleaseAge };
    return { inventory, exposure: exposureOf(inventory, { clock, policy }) };
  });
}
