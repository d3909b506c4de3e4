import type { ItemVersion, Target } from '../actions/action.js';
import type { Plan } from '../plan/plan.js';
import type { StagingDecision } from '../plan/staging-first.js';
import type { StagingEntry } from '../inventory/staging-table.js';
import { nameOf, refFrom } from '../inventory/kinds.js';
import { isHeldBefore, isProblem, UNDONE, type StepResult, type StepStatus } from '../run/types.js';
import type { RunScope } from './run-scope.js';
import { forTerminal } from '../util/safe-text.js';

/** A step as it ended, with what staging first needs of it (a plan's step and its result, or a report's result). */
export interface StagingEnd {
  role?: string;
  staging?: StagingDecision[];
  target: Target;
  status: StepStatus;
  reason: string | null;
  /** What the environment runs after the write, as read back (a pinned update's `runs`). */
  runs?: ItemVersion[];
  /** Why a held step was held: one held before its write sent nothing, and says nothing of the version. */
  held?: StepResult['held'];
}

/** A plan's steps with their results, as staging ends (a step with no result ended nowhere). */
export function endsOf(plan: Plan, results: ReadonlyMap<string, StepResult>): StagingEnd[] {
  return plan.steps.flatMap((step) => {
    const r = results.get(step.id);
    if (!r) return [];
    return [
      {
        role: step.role,
        staging: step.staging,
        target: step.target,
        status: r.status,
        reason: r.reason,
        ...(r.runs ? { runs: r.runs } : {}),
        ...(r.held ? { held: r.held } : {}),
      },
    ];
  });
}

/**
 * What each staging step (rollout.staging_first) came to, in the staging store: a version a staging
 * step took with its checks passed is `healthy` from now, and soaks; one whose step is a problem (it
 * failed, broke the site, was held for a person to look at, or may not have reached the service) is
 * never taken by live. Called wherever a run's steps end: the run, a resume (also with nothing left to
 * send), and status. A step not sent (held before its write among them), or still running, says nothing.
 */
async function recordStaging(scope: RunScope, company: string, ended: readonly StagingEnd[]): Promise<void> {
  const at = scope.globals.io.now();
  const entries: StagingEntry[] = [];
  for (const e of ended) {
    if (e.role !== 'staging' || !e.staging || !e.target.env_id) continue;
    const kind = e.status === 'succeeded' ? 'healthy' : isProblem(e.status) ? 'failed' : undefined;
    // A write a restore undid passed its own checks: neither soaking nor barred, it is staged again. One held before
    // its write (its page not seen healthy) was never sent: with no record, live holds the version until it is staged.
    if (!kind || e.reason?.startsWith(UNDONE) || isHeldBefore(e)) continue;
    const why = kind === 'failed' ? `its staging update ended ${e.status}${e.reason ? `: ${e.reason}` : ''}` : undefined;
    for (const d of e.staging) {
      // Soaking is of what staging runs, as read back: a healthy step runs the version judged (a pinned
      // update that runs another failed), and a failure holds the version it was judged for.
      const version = kind === 'healthy' ? (e.runs?.find((r) => r.name === nameOf(d))?.version ?? d.version) : d.version;
      entries.push({ env_id: e.target.env_id, ...refFrom(d), version, kind, at, ...(why ? { why } : {}) });
    }
  }
  if (entries.length > 0) await scope.coordination.staging(company).record(entries);
}

/** recordStaging, and a warning when the store cannot take it: the report stands whatever happens to that record. */
export async function recordStagingOrWarn(scope: RunScope, company: string, ended: readonly StagingEnd[]): Promise<void> {
  try {
    await recordStaging(scope, company, ended);
  } catch (error) {
    // Safe either way: a version with no record of its staging update is held (staging_unchecked), or staged again.
    // Said on stderr alone: a resume with nothing left to send has no runtime (nor needs one) to log through.
    const message = `could not record what the staging updates came to (${(error as Error).message}): live holds those versions until a staging update of them is recorded`;
    scope.globals.io.stderr.write(`sitefleet: warning: ${forTerminal(message)}\n`);
  }
}
