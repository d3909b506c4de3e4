import type { Action } from '../actions/action.js';
import { inventoryReader, readInventory } from '../inventory/read.js';
import type { Step } from '../plan/plan.js';
import type { CallPort } from './caller.js';
import type { StepResult } from './types.js';

/**
 * `verify: true`: once a task's operations ended, read the listing again (one read for the task)
 * and let the action judge each step that was accepted or succeeded; those it does not see done fail.
 * Steps the listing already confirmed (`confirmed_by: "listing"`) are not read again.
 */
export async function verifyTask(
  action: Action,
  caller: CallPort,
  company: string,
  steps: Step[],
  results: Map<string, StepResult>,
): Promise<[Step, StepResult][]> {
  // A step the listing confirmed was judged by the same rule, in a read made after its operation: no second read for it.
  const done = steps.filter(
    (s) => (results.get(s.id)?.status === 'succeeded' && results.get(s.id)?.confirmed_by !== 'listing') || results.get(s.id)?.status === 'accepted',
  );
  if (!action.verify || done.length === 0) return [];
  const listing = await readInventory(inventoryReader(caller), company);
  const changed: [Step, StepResult][] = [];
  for (const step of done) {
    const reason = action.verify(step, listing);
    if (reason !== undefined) changed.push([step, { ...results.get(step.id)!, status: 'failed', reason: `verify: ${reason}` }]);
  }
  return changed;
}
