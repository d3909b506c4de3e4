import type { Plan } from '../plan/plan.js';
import type { StagingEntry } from '../plan/staging-first.js';
import type { StepResult } from '../run/types.js';
import type { RunScope } from './run-scope.js';

/**
 * After a run, what each staging step (rollout.staging_first) came to, in the staging store: a
 * version staging took and kept healthy soaks from now; one whose staging step failed (the update,
 * its health check, a broken site restored, or a page held for a person to look at) is never taken by
 * live. A step not sent says nothing.
 */
export async function recordStaging(scope: RunScope, plan: Plan, results: ReadonlyMap<string, StepResult>): Promise<void> {
  const at = scope.globals.io.now();
  const entries: StagingEntry[] = [];
  for (const step of plan.steps) {
    const result = results.get(step.id);
    if (step.role !== 'staging' || !step.staging || !result || !step.target.env_id) continue;
    // A held staging step (it looks different) waits for a person: live does not take it on its own.
    const kind = result.status === 'succeeded' ? 'since' : ['failed', 'unknown', 'held'].includes(result.status) ? 'failed' : undefined;
    if (!kind) continue;
    const why = kind === 'failed' ? `its staging update ended ${result.status}${result.reason ? `: ${result.reason}` : ''}` : undefined;
    for (const d of step.staging) entries.push({ env_id: step.target.env_id, theme: d.theme, version: d.version, kind, at, ...(why ? { why } : {}) });
  }
  if (entries.length > 0) await scope.coordination.staging(plan.company).record(entries);
}
