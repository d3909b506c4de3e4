import { ACTIONS } from '../actions/index.js';
import type { Step } from '../plan/plan.js';
import type { ReportResult } from '../report/report.js';
import type { CallPort } from '../run/caller.js';
import type { StepResult } from '../run/types.js';
import { verifyTask, type JudgedStep } from '../run/verify.js';

/** What a report's run planned, as its journal's start record keeps it (absent: a report without its journal). */
export interface PlannedSteps {
  steps: readonly Step[];
  tasks: readonly { name: string; verify?: boolean }[];
}

/**
 * The read back a run gives its writes (run/verify.ts), given to the writes `status` saw end: a write
 * the run did not wait for is `succeeded` only once the environment's own listing shows it done, else
 * `failed` with `not_updated`, as in the run. One read per task (per written environment where the
 * company listing lags). Each result it changed is folded into the report and handed to `changed`.
 */
export async function readBackEnded(
  caller: CallPort,
  company: string,
  ended: readonly ReportResult[],
  planned: PlannedSteps | undefined,
  stepResultOf: (r: ReportResult) => StepResult,
  changed: (r: ReportResult) => unknown,
): Promise<void> {
  const byTask = new Map<string, ReportResult[]>();
  for (const r of ended) if (r.step_id && r.status === 'succeeded') byTask.set(r.task, [...(byTask.get(r.task) ?? []), r]);
  const planOf = new Map(planned?.steps.map((s) => [s.id, s]));
  for (const [task, own] of byTask) {
    const action = ACTIONS.get(own[0]!.action);
    if (!action) continue;
    const steps: JudgedStep[] = own.map((r) => planOf.get(r.step_id!) ?? stepOfResult(r));
    const results = new Map(own.map((r) => [r.step_id!, stepResultOf(r)]));
    const verify = planned?.tasks.find((t) => t.name === task)?.verify === true;
    const judged = await verifyTask(action, caller, company, steps, results, verify);
    for (const [step, result] of judged) {
      const r = own.find((x) => x.step_id === step.id)!;
      // The result is the run's own record: one the read back changed loses the fields it no longer carries (held, failure).
      for (const key of ['held', 'failure', 'reason'] as const) delete r[key];
      Object.assign(r, result);
      await changed(r);
    }
  }
}

/** A report's write as a read back reads it, where no journal keeps its plan step: its target, body and what it judged. */
function stepOfResult(r: ReportResult): JudgedStep {
  return { id: r.step_id!, target: r.target, body: r.request?.body, ...(r.precondition ? { precondition: r.precondition } : {}) };
}
