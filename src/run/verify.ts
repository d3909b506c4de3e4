import type { Action } from '../actions/action.js';
import type { Inventory } from '../inventory/inventory.js';
import { KIND_TABLE, BASE_KIND } from '../inventory/kinds.js';
import { inventoryReader, readEnvironmentItems, readInventory, readKind } from '../inventory/read.js';
import type { Step } from '../plan/plan.js';
import type { CallPort } from './caller.js';
import { isHeldBefore, type StepResult } from './types.js';

/**
 * Once a task's operations ended, read the listing again (one read for the task, or one per
 * environment for a kind whose company listing lags: see listingFor) and let the action
 * judge its steps that were accepted or succeeded. `verify: true`: those it does not see done fail;
 * steps the listing already confirmed (`confirmed_by: "listing"`) are not judged again. Steps the
 * action reads back (`readBack`: a pinned version) are read whatever `verify` says, confirmed or not,
 * held or not (a held write happened): what the environment runs is recorded on the step, and one
 * that runs another version than was judged fails, saying which.
 */
export async function verifyTask(
  action: Action,
  caller: CallPort,
  company: string,
  steps: Step[],
  results: Map<string, StepResult>,
  verify: boolean,
): Promise<[Step, StepResult][]> {
  const ended = (s: Step) => results.get(s.id)?.status === 'succeeded' || results.get(s.id)?.status === 'accepted';
  // A held step's write happened too (its page is what a person must look at): what it installed is read back as well;
  // not one held before its write (nothing was sent).
  const held = (s: Step) => results.get(s.id)?.status === 'held' && !isHeldBefore(results.get(s.id)!);
  // A step the listing confirmed was judged by the same rule, in a read made after its operation: no second read for it.
  // Only a write whose operation ended can be read back: one accepted and not waited for may not have run yet,
  // and reading it now would call the environment behind what was judged when it is merely not there yet.
  const over = (s: Step) => results.get(s.id)?.status === 'succeeded' || held(s);
  const judged = steps.filter(
    (s) => (ended(s) && verify && action.verify && results.get(s.id)?.confirmed_by !== 'listing') || (over(s) && readsBack(action, s)),
  );
  if (judged.length === 0) return [];
  const listing = await listingFor(action, caller, company, judged);
  const changed: [Step, StepResult][] = [];
  for (const step of judged) {
    const result = results.get(step.id)!;
    const back = action.readBack?.(step, listing);
    const reason = back ? back.differs : verify ? action.verify?.(step, listing) : undefined;
    if (back === undefined && reason === undefined) continue;
    // Another version than was judged is a failure whatever the page showed: the hold's reason gives way to it.
    const { held: _held, ...sent } = result;
    changed.push([
      step,
      reason === undefined ? { ...result, runs: back!.runs } : { ...sent, ...(back ? { runs: back.runs } : {}), status: 'failed', reason: `verify: ${reason}` },
    ]);
  }
  return changed;
}

/**
 * The listing the judged steps are read against: the company listing of the action's kind, or where
 * that listing may lag behind a write (plugins: `listingConfirms` false), each judged environment's own
 * listing, one read each.
 */
async function listingFor(action: Action, caller: CallPort, company: string, judged: Step[]): Promise<Inventory> {
  const reader = inventoryReader(caller);
  const kind = action.items ?? BASE_KIND;
  const row = KIND_TABLE[kind];
  // WordPress: the site listing, one read for the fleet, is all there is to read it back from.
  if (row.listing === 'listSites') {
    const listing: Inventory = { company, environments: [], listed: {} };
    await readKind(reader, listing, kind);
    return listing;
  }
  if (row.listingConfirms || !row.environmentListing) {
    const listing = await readInventory(reader, company);
    if (kind !== BASE_KIND) await readKind(reader, listing, kind);
    return listing;
  }
  const envIds = [...new Set(judged.flatMap((s) => (s.target.env_id ? [s.target.env_id] : [])))];
  const listing: Inventory = { company, environments: envIds.map((id) => ({ id, site: '', name: '', items: {} })), listed: {} };
  await readEnvironmentItems(reader, listing, kind, envIds);
  return listing;
}

/** Whether the action reads this step back (asked of its body alone: no listing is needed to tell). */
function readsBack(action: Action, step: Step): boolean {
  return action.readBack?.(step, { company: '', environments: [], listed: {} }) !== undefined;
}
