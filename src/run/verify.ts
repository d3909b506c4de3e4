import type { Action } from '../actions/action.js';
import { inventoryReader, readInventory } from '../inventory/read.js';
import type { Step } from '../plan/plan.js';
import type { CallPort } from './caller.js';
import type { StepResult } from './types.js';

/**
 * Once a task's operations ended, read the listing again (one read for the task) and let the action
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
  // A held step's write happened too (its page is what a person must look at): what it installed is read back as well.
  const held = (s: Step) => results.get(s.id)?.status === 'held';
  // A step the listing confirmed was judged by the same rule, in a read made after its operation: no second read for it.
  const judged = steps.filter(
    (s) => (ended(s) && verify && action.verify && results.get(s.id)?.confirmed_by !== 'listing') || ((ended(s) || held(s)) && readsBack(action, s)),
  );
  if (judged.length === 0) return [];
  const listing = await readInventory(inventoryReader(caller), company);
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

/** Whether the action reads this step back (asked of its body alone: no listing is needed to tell). */
function readsBack(action: Action, step: Step): boolean {
  return action.readBack?.(step, { company: '', environments: [], theme_count: 0 }) !== undefined;
}
