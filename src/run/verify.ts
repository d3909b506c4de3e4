import { inventoryReader, readInventory } from '../inventory/read.js';
import type { Step } from '../plan/plan.js';
import type { Caller } from './caller.js';
import type { StepResult } from './types.js';

/**
 * `verify: true` on themes.update: once the task's operations ended, read the listing again and
 * fail the steps whose environment still shows an update available for a theme the step updated.
 */
export async function verifyThemeUpdates(caller: Caller, company: string, steps: Step[], results: Map<string, StepResult>): Promise<[Step, StepResult][]> {
  const done = steps.filter((s) => results.get(s.id)?.status === 'succeeded' || results.get(s.id)?.status === 'accepted');
  if (done.length === 0) return [];
  const inventory = await readInventory(inventoryReader(caller), company);
  const byId = new Map(inventory.environments.map((e) => [e.id, e]));
  const changed: [Step, StepResult][] = [];
  for (const step of done) {
    const env = byId.get(step.target.env_id!);
    const wanted = ((step.body as { themes?: { name: string }[] }).themes ?? []).map((t) => t.name);
    const still = env?.themes.filter((t) => wanted.includes(t.name) && t.update_available).map((t) => t.name) ?? [];
    if (still.length > 0) {
      changed.push([
        step,
        { ...results.get(step.id)!, status: 'failed', reason: `verify: the listing still shows an update available for ${still.join(', ')}` },
      ]);
    }
  }
  return changed;
}
