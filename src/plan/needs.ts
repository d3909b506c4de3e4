import { readsOf, type InventoryRead } from '../actions/action.js';
import { ACTIONS } from '../actions/index.js';
import { usesDomain } from '../health/spec.js';
import type { Sighting } from '../inventory/first-seen.js';
import type { Inventory } from '../inventory/inventory.js';
import { KIND_TABLE, refOf, type Kind, OTHER_KINDS } from '../inventory/kinds.js';
import type { Playbook, Task } from '../playbook/types.js';
import { selectEnvironments, selectorKinds } from './select.js';
import { StagingSites } from './staging-first.js';

/**
 * What a plan must read, record and judge by before it can be made, as its tasks say: the reads
 * (domains, backups, other kinds' listings) of the environments they select, the first-seen times
 * and the staging store. The command (app/prepare.ts) asks, reads, and hands the answers to the
 * pure planner (plan.ts).
 */

/** Environments whose `read` (domain lists, backups) the plan needs first, as the tasks' actions say. */
export function readsNeeded(playbook: Playbook, inventory: Inventory, read: InventoryRead): string[] {
  return environmentsOfTasks(playbook, inventory, (task) => {
    const healthReads = task.health !== undefined && usesDomain(task.health) ? ['domains'] : [];
    return [...readsOf(ACTIONS.get(task.action)!, task.with), ...healthReads].includes(read);
  });
}

/** The versions tasks name that a listing may not show yet (`with.versions` of a kind of one item): sighted when named. */
export function namedSightings(playbook: Playbook): Sighting[] {
  return playbook.tasks.flatMap((task) => {
    const kind = kindOf(task.action);
    const only = kind && KIND_TABLE[kind].only;
    const versions = (task.with as { versions?: unknown }).versions;
    if (!kind || only === undefined || !Array.isArray(versions)) return [];
    return versions.filter((v): v is string => typeof v === 'string').map((version) => ({ ...refOf(kind, only), version }));
  });
}

/** The kind of item an action updates, if it updates one. */
export function kindOf(action: string): Kind | undefined {
  return ACTIONS.get(action)?.items;
}

/** The kinds of item the playbook's tasks update besides themes, whose listings the plan reads too. */
export function kindsNeeded(playbook: Playbook): Kind[] {
  const kinds = new Set(playbook.tasks.flatMap((t) => [ACTIONS.get(t.action)!.items, ...selectorKinds(playbook, t)]));
  return OTHER_KINDS.filter((k) => kinds.has(k));
}

/**
 * Environments whose items of `kind` the plan needs (where they are read one environment at a time):
 * those the tasks updating that kind select; every environment when a selector picks by that kind,
 * as what each runs must be known before it can be picked.
 */
export function itemReadsNeeded(playbook: Playbook, inventory: Inventory, kind: Kind): string[] {
  if (playbook.tasks.some((t) => selectorKinds(playbook, t).includes(kind))) return inventory.environments.map((e) => e.id);
  return environmentsOfTasks(playbook, inventory, (task) => ACTIONS.get(task.action)!.items === kind);
}

/** The environments the tasks that `need` it select, with the staging environments staging first writes to. */
function environmentsOfTasks(playbook: Playbook, inventory: Inventory, need: (task: Task) => boolean): string[] {
  const ids = new Set<string>();
  for (const task of playbook.tasks) {
    if (need(task)) {
      const selected = selectEnvironments(playbook, task, inventory);
      // Staging first also writes to (and checks) the sites' staging environments.
      const staging = task.rollout?.staging_first ? new StagingSites(inventory, task.rollout).ofSites(selected) : [];
      for (const env of [...selected, ...staging]) ids.add(env.id);
    }
  }
  return [...ids];
}

/** Whether some task goes through staging first: the command records what staging runs and reads the staging store first. */
export function stagingNeeded(playbook: Playbook): boolean {
  return playbook.tasks.some((t) => t.rollout?.staging_first === true);
}

/** Whether some task judges release ages on environments it selected: the command records and reads the first-seen table first. */
export function releasesNeeded(playbook: Playbook, inventory: Inventory): boolean {
  return readsNeeded(playbook, inventory, 'first_seen').length > 0;
}

/** Whether a task updates items, so that the company's quarantine and retries must be read before planning (inventory/withheld.ts). */
export function withholdingNeeded(playbook: Playbook): boolean {
  return playbook.tasks.some((t) => kindOf(t.action) !== undefined);
}
