import { AbortedError } from '../errors.js';
import { fillSecrets } from '../actions/action.js';
import { ACTIONS } from '../actions/index.js';
import { operationData, reasonText, writeAnswer } from '../api/answer.js';
import { carried } from './operation-end.js';
import type { Step } from '../plan/plan.js';
import type { CallPort, HeldPlace } from './caller.js';
import type { RunEvent, StepResult, StopKind } from './types.js';

/** What sending a step needs from the run. */
export interface SendContext {
  caller: CallPort;
  /** Fills the secret fields of bodies (their `${VAR}` references) at the moment of sending. */
  env: Record<string, string | undefined>;
  onEvent?(event: RunEvent): void | Promise<void>;
  /** Asked right before each attempt leaves (before its intent is journaled): false sends nothing more (a window that closed). */
  mayStillSend?(): boolean;
}

/** Sends one step (with its retries) within the place its work holds, and folds the outcome into the step's result. */
export async function sendStep(
  step: Step,
  context: SendContext,
  stopSignal: AbortSignal,
  place: HeldPlace,
): Promise<{ result: StepResult; stopRun?: StopKind }> {
  const body = fillSecrets(step.body, ACTIONS.get(step.action)?.secretFields, context.env);
  // Every body is checked against the API's rules again here, whoever made the plan: a saved plan
  // or a journal read back is data, and the check costs microseconds beside the call.
  const outcome = await context.caller.call(step.endpoint, step.params, body, step.idempotent, {
    stopSignal,
    place,
    beforeAttempt: (attempt) => {
      if (context.mayStillSend?.() === false) throw new AbortedError('not sent: no write starts after the window closed');
      return context.onEvent?.({ type: 'attempt', step, attempt });
    },
  });
  const base = {
    step_id: step.id,
    attempts: outcome.attempts,
    http_status: null,
    operation_id: null,
    error: null,
    reason: step.note ?? null,
    // A write the run's quarantine trimmed: what it sent is not the plan's (the report and the stores say what went).
    ...(step.trimmed
      ? { sent: { body: step.body, ...(step.precondition ? { precondition: step.precondition } : {}), ...(step.updates ? { updates: step.updates } : {}) } }
      : {}),
  };
  if (outcome.ok) {
    const { status, data } = outcome.value!;
    const answer = writeAnswer(data);
    if (answer.kind === 'accepted') return { result: { ...base, status: 'accepted', http_status: status, operation_id: answer.operationId } };
    if (answer.kind === 'refused') {
      const reason = answer.reason ?? { message: 'no message' };
      return {
        result: {
          ...base,
          status: 'failed',
          http_status: answer.status,
          error: `the service answered ${status} with status ${answer.status}: ${reasonText(reason)}`,
          reason: reason.message,
        },
      };
    }
    // Done at once: a synchronous endpoint, or an asynchronous one that finished without an operation.
    // The action reads what else the answer says, and what its `data` carries as an operation's would.
    const read = ACTIONS.get(step.action)?.readAnswer?.(data) ?? {};
    const result: StepResult = { ...base, status: 'succeeded', http_status: status, ...carried(step.action, operationData(data)) };
    if (read.note) result.reason = read.note;
    if (read.output !== undefined) result.private_output = read.output;
    return { result };
  }
  const error = outcome.error as { status?: number; message?: string; name?: string };
  const decision = outcome.decision!;
  // Never accepted (stopped before an answer that counts, or refused with a 401): `skipped`, which
  // `resume` sends. A step the service never accepted is never reported as failed or done.
  const neverAccepted = outcome.interrupted === true || decision.kind === 'stop';
  const status = neverAccepted ? 'skipped' : decision.kind === 'unknown' ? 'unknown' : 'failed';
  return {
    result: {
      ...base,
      status,
      http_status: typeof error.status === 'number' ? error.status : null,
      error: `${error.name ?? 'Error'}: ${error.message ?? String(outcome.error)}`,
      reason: decision.reason,
    },
    stopRun: decision.kind === 'stop' ? decision.stop : undefined,
  };
}
