import type { Inventory } from '../inventory/inventory.js';
import type { Plan, Step } from './plan.js';
import { canonical, changeOf, heldPlan, NOT_SELECTED, type PlanChange } from './saved.js';

export interface ResumedPlan {
  /** The plan the resume runs: the playbook's tasks; ended steps as the journal has them; what is left to send as the fresh plan sends it. */
  plan: Plan;
  /** Steps left to send that the fleet changed under: dropped (skipped "changed since the run"), not sent. */
  changed: PlanChange[];
  /** Steps left to send that the playbook would not make, the fleet being as it is: the resume is refused. */
  refused: PlanChange[];
}

/**
 * Holds the journal's plan against a plan made now from the playbook it was planned from (same
 * text, date and company). A journal is data: of what is left to send (`toSend`), a step is sent only
 * as the fresh plan sends it (endpoint, parameters, body, restore point, health, wave), under the
 * playbook's tasks. A step the fleet explains is dropped as changed: its environment is gone, the
 * fresh plan skips it, its precondition or its target's names changed. A step the fleet cannot
 * explain (another request for the same target and precondition, a role it does not have, a target
 * the playbook does not select) is refused: the journal was changed after the run. Pure.
 */
export function holdResumed(journal: Plan, toSend: readonly Step[], fresh: Plan, inventory: Inventory): ResumedPlan {
  const freshById = new Map(fresh.steps.map((s) => [s.id, s]));
  const envs = new Map(inventory.environments.map((e) => [e.id, e]));
  const changed: PlanChange[] = [];
  const refused: PlanChange[] = [];
  const sendAs = new Map<string, Step>();
  for (const step of toSend) {
    const now = freshById.get(step.id);
    const change = now && now.role !== step.role ? `${NOT_SELECTED} as ${step.role ?? 'a write'}` : changeOf(step, now, fresh, envs);
    // The journal's wave stands (its start record is sealed): waves made again over what is left would put a write before its restore point.
    if (change === undefined) sendAs.set(step.id, withWave(now!, step.wave));
    else if (explained(step, now)) changed.push({ step, change });
    else refused.push({ step, change });
  }
  const dropped = new Set(changed.map((c) => c.step.id));
  const steps = journal.steps.filter((s) => !dropped.has(s.id)).map((s) => sendAs.get(s.id) ?? s);
  // A write sent now takes the restore point the fresh plan takes for it, even one the journal lacks.
  const present = new Set(steps.map((s) => s.id));
  for (const step of [...sendAs.values()])
    if (step.backup_step && !present.has(step.backup_step)) {
      steps.splice(steps.indexOf(step), 0, freshById.get(step.backup_step)!);
      present.add(step.backup_step);
    }
  return {
    plan: heldPlan(fresh, journal, steps, changed, 'the run'),
    changed,
    refused,
  };
}

/**
 * Whether the fleet as it is now explains why a step no longer holds: the fresh plan has no such
 * step (its environment or domain is gone, renamed out of the target, or skipped now), or its
 * precondition moved. Another request for the same target and precondition it cannot explain.
 */
function explained(step: Step, now: Step | undefined): boolean {
  if (!now) return true;
  return (now.precondition ?? '') !== (step.precondition ?? '') || canonical(ids(now.target)) !== canonical(ids(step.target));
}

/** A target's ids, not its names: a site renamed since the run is the same site. */
function ids(target: Step['target']): unknown {
  return { env_id: target.env_id, domain_id: target.domain_id, site_id: target.site_id };
}

function withWave(step: Step, wave: number | undefined): Step {
  const { wave: _fresh, ...rest } = step;
  return wave === undefined ? rest : { ...rest, wave };
}
