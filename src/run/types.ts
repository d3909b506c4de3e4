import type { Step } from '../plan/plan.js';

/** The vocabulary of a run, shared by the executor, the journal, the report and the commands. */
export type StepStatus = 'planned' | 'accepted' | 'succeeded' | 'failed' | 'skipped' | 'unknown';

export interface StepResult {
  step_id: string;
  status: StepStatus;
  http_status: number | null;
  operation_id: string | null;
  attempts: number;
  error: string | null;
  reason: string | null;
  /** What a synchronous call answered that the user asked to keep (login links go to a private file). */
  output?: unknown;
}

/**
 * Why a run stopped early: a 401, a crossed failure budget, a signal, lost coordination, or the
 * service refusing with 429 for longer than `--rate-limit-wait` (another client holds the budget).
 */
export type StopKind = 'auth' | 'budget' | 'interrupted' | 'coordination' | 'rate_limited';

export type RunEvent =
  | { type: 'attempt'; step: Step; attempt: number }
  /** The answer to a step's call. */
  | { type: 'result'; step: Step; result: StepResult }
  /** A later word on an ended step: its operation finished, or verify found the work not done. */
  | { type: 'update'; step: Step; result: StepResult }
  | { type: 'stopped'; kind: StopKind; reason: string };

export interface ExecuteOutcome {
  results: Map<string, StepResult>;
  /** Why the run stopped early: authentication, failure budget, interruption. */
  stopped?: { reason: string; kind: StopKind };
}

/** Statuses after which a step is not sent again. `skipped` is not one: it means "never sent". */
export const ENDED_STATUSES: ReadonlySet<StepStatus> = new Set(['accepted', 'succeeded', 'failed', 'unknown']);
