import { sightingsOf } from '../inventory/first-seen.js';
import type { Inventory } from '../inventory/inventory.js';
import type { ReleaseClock } from '../inventory/release-age.js';
import type { Coordination } from '../coord/types.js';

/**
 * Records every theme version the listing shows in the company's first-seen store (durably, before
 * the plan is made and so before any write), then gives what the planner judges release ages with.
 * Planning and dry runs record too: a sighting is an observation of the listing, not a change to the
 * fleet, and a plan that did not record would show dates the run after it contradicts.
 */
export async function releaseClock(coordination: Coordination, inventory: Inventory, now: number): Promise<ReleaseClock> {
  const firstSeen = await coordination.firstSeen(inventory.company).record(sightingsOf(inventory), now);
  return { now, firstSeen };
}
