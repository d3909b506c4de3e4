import { canonicalJson } from '../util/seal.js';
import type { Inventory } from '../inventory/inventory.js';
import type { Plan, SkippedTarget, Step } from './plan.js';

/** A step of a saved plan whose precondition no longer holds in the fleet as it is now. */
export interface PlanChange {
  step: Step;
  /** What changed, in words: `astra 2.1 → 2.3 (planned: astra 2.1 → 2.2)`, `no theme update available`. */
  change: string;
}

export interface SavedPlanCheck {
  /** The saved plan with the changed steps moved to `skipped` ("changed since the plan: …"): what the run sends. */
  plan: Plan;
  changed: PlanChange[];
  /** Writes a plan made now would send that the saved one does not hold: never sent by `run --plan`. */
  unplanned: Step[];
}

/**
 * Holds a saved plan against a plan made now from the same playbook text, date and company (`fresh`)
 * and the listing it was made from. A saved step still holds when the fresh plan has the same step
 * (same environment, still selected) with the same request (endpoint, parameters, body) and the same
 * precondition (for a theme update, the same themes with the same update available).
 *
 * The file is data, never authority: what is sent is the fresh plan's step, with the fresh plan's
 * restore point, wave and health check, under the playbook's tasks and settings. The saved plan only
 * narrows it: steps only the fresh plan has are counted, never added, so `run --plan` sends what was
 * reviewed or less, never more. Pure: no I/O, no clock.
 */
export function checkSavedPlan(saved: Plan, fresh: Plan, inventory: Inventory): SavedPlanCheck {
  const freshById = new Map(fresh.steps.map((s) => [s.id, s]));
  const envs = new Map(inventory.environments.map((e) => [e.id, e]));
  const changed: PlanChange[] = [];
  const kept = new Set<string>();
  for (const step of saved.steps) {
    if (step.role === 'backup' || freshById.get(step.id)?.role === 'backup') continue;
    const change = changeOf(step, freshById.get(step.id), fresh, envs);
    if (change) changed.push({ step, change });
    else kept.add(step.id);
  }
  // A kept write brings the restore point the fresh plan takes for it, whatever the file says.
  for (const id of [...kept]) {
    const backup = freshById.get(id)!.backup_step;
    if (backup) kept.add(backup);
  }
  const savedIds = new Set(saved.steps.map((s) => s.id));
  const unplanned = fresh.steps.filter((s) => s.role !== 'backup' && !savedIds.has(s.id));
  const steps = fresh.steps.filter((s) => kept.has(s.id));
  return {
    plan: heldPlan(fresh, saved, steps, changed, 'the plan'),
    changed,
    unplanned,
  };
}

/**
 * The plan a file read back comes to when held against the fresh one: the playbook's tasks (their
 * counts made again), the steps that go out, and what the file skipped plus what was dropped as
 * changed since `since`. Shared by saved plans and resumed journals.
 */
export function heldPlan(fresh: Plan, file: Plan, steps: Step[], changed: PlanChange[], since: string): Plan {
  const skipped: SkippedTarget[] = [
    ...file.skipped.filter((s) => fresh.tasks.some((t) => t.index === s.task_index && t.name === s.task)),
    ...changed.map(({ step, change }) => ({
      task: step.task,
      task_index: step.task_index,
      action: step.action,
      target: step.target,
      reason: `changed since ${since}: ${change}`,
    })),
  ];
  const count = (list: { task_index: number }[], index: number) => list.filter((s) => s.task_index === index).length;
  return {
    ...fresh,
    made: file.made,
    tasks: fresh.tasks.map((t) => ({ ...t, steps: count(steps, t.index), skipped: count(skipped, t.index) })),
    steps,
    skipped,
  };
}

/** What `changeOf` says of a step the fresh plan neither makes nor skips. */
export const NOT_SELECTED = `the task's target no longer selects it`;

/** Why `step` no longer holds against the fresh plan's step of the same id (`now`), in words; undefined when it holds. */
export function changeOf(step: Step, now: Step | undefined, fresh: Plan, envs: Map<string, Inventory['environments'][number]>): string | undefined {
  if (now) {
    if (now.endpoint !== step.endpoint || now.method !== step.method || now.path !== step.path || canonical(now.params) !== canonical(step.params))
      return `the request is now ${now.method} ${now.path}`;
    if (canonical(now.body) !== canonical(step.body)) return `the body is now ${canonical(now.body) ?? 'empty'} (planned: ${canonical(step.body) ?? 'empty'})`;
    if ((now.precondition ?? '') !== (step.precondition ?? '')) return `${now.precondition ?? 'nothing'} (planned: ${step.precondition ?? 'nothing'})`;
    return undefined;
  }
  const env = step.target.env_id;
  if (env && !envs.has(env) && step.target.environment !== undefined) return 'the environment is no longer in the listing';
  const same = (s: SkippedTarget) =>
    s.task_index === step.task_index &&
    s.target.env_id === step.target.env_id &&
    s.target.domain_id === step.target.domain_id &&
    s.target.site_id === step.target.site_id;
  const skip = fresh.skipped.find(same);
  return skip ? skip.reason : NOT_SELECTED;
}

/** JSON with keys sorted: a plan file re-indented or re-ordered by a reviewer's tool is still the same plan. */
export function canonical(value: unknown): string | undefined {
  return value === undefined ? undefined : canonicalJson(value);
}
