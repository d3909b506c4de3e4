import type { Inventory } from '../inventory/inventory.js';
import { stagingTargets } from '../plan/plan.js';
import type { StagingClock, StagingEntry } from '../plan/staging-first.js';
import type { Playbook } from '../playbook/types.js';
import type { Coordination } from './types.js';

/**
 * Records, before the plan is made, the versions the staging environments of staging-first tasks run
 * now that the store does not know yet (a version staging took by hand soaks from the night it is
 * first seen), then gives what the planner judges staging with.
 */
export async function stagingClock(coordination: Coordination, playbook: Playbook, inventory: Inventory, now: number): Promise<StagingClock> {
  const store = coordination.staging(inventory.company);
  const known = await store.record([]);
  const sightings: StagingEntry[] = stagingTargets(playbook, inventory).flatMap((env) =>
    env.themes
      .filter((t) => t.version && known.get(env.id, t.name, t.version)?.since === undefined)
      .map((t) => ({ env_id: env.id, theme: t.name, version: t.version, kind: 'since' as const, at: now })),
  );
  return { now, table: sightings.length > 0 ? await store.record(sightings) : known };
}
