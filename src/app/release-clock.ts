import { sightingsOf, type Sighting } from '../inventory/first-seen.js';
import type { Inventory } from '../inventory/inventory.js';
import type { ReleaseClock } from '../inventory/release-age.js';
import type { Coordination } from '../coord/types.js';

/**
 * Records every theme version the listing shows in the company's first-seen store (durably, before
 * the plan is made and so before any write), then gives what the planner judges release ages with.
 * Planning and dry runs record too: a sighting is an observation of the listing, not a change to the
 * fleet, and a plan that did not record would show dates the run after it contradicts. `named`: versions
 * a playbook names that no listing shows yet (WordPress's `with.versions`): seen from now, else such a
 * version would be "first seen now" on every plan and its age would never pass.
 */
export async function releaseClock(coordination: Coordination, inventory: Inventory, now: number, named: readonly Sighting[] = []): Promise<ReleaseClock> {
  const firstSeen = await coordination.firstSeen(inventory.company).record([...sightingsOf(inventory), ...named], now);
  return { now, firstSeen };
}
