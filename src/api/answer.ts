import type { OperationState } from './types.js';

/**
 * What an answer means, read from its body first. The spec is silent on operation status; every
 * public client of the real service reads the body's numeric `status` (`{"status": 500, "message":
 * …}`), and one says from practice that terminal states all come back as HTTP 200 with the outcome
 * only in the body. So the body decides when it carries a status, and the HTTP code only when it
 * does not.
 */

/** The body's numeric `status`, when it has one. */
export function bodyStatus(data: unknown): number | undefined {
  const status = field(data, 'status');
  return typeof status === 'number' && Number.isInteger(status) ? status : undefined;
}

/** The body's `operation_id`, when it is a non-empty string. */
export function bodyOperationId(data: unknown): string | undefined {
  const id = field(data, 'operation_id');
  return typeof id === 'string' && id !== '' ? id : undefined;
}

/**
 * An operation status answer (a 2xx; HTTP errors are errors before they get here): 202 running,
 * another 2xx done, 404 not visible yet, any other 4xx or 5xx failed.
 */
export function operationState(httpStatus: number, data: unknown): OperationState {
  const status = bodyStatus(data) ?? httpStatus;
  if (status === 202) return 'in_progress';
  if (status === 404) return 'not_found';
  if (status >= 400) return 'failed';
  return 'succeeded';
}

/**
 * A write's 2xx answer: an operation started (an `operation_id`, with or without a 202: the vendor's
 * own document answers theme bulk updates with 200 and an optional id), work refused after all (the
 * body's status is 4xx or 5xx), or work done at once.
 */
export type WriteAnswer = { kind: 'accepted'; operationId: string } | { kind: 'refused'; status: number; reason?: ServiceReason } | { kind: 'done' };

export function writeAnswer(data: unknown): WriteAnswer {
  const status = bodyStatus(data);
  if (status !== undefined && status >= 400) return { kind: 'refused', status, reason: serviceReason(data) };
  const operationId = bodyOperationId(data);
  return operationId ? { kind: 'accepted', operationId } : { kind: 'done' };
}

/** How deep a reason is looked for: the recordings nest it one level down; a few more cost nothing. */
const REASON_DEPTH = 4;

/**
 * What an answer says went wrong: `message`, the most specific text it holds, and `context`, the
 * outer text when the two differ. The real service answers a failed operation with an outer message
 * that only points inward (`Operation failed! Please refer to \`data\` for more details.`) and the
 * reason one level down, as `{status, message, data}` again (shared/real-service-notes.md). So the
 * `data` chain is followed while it holds a message, and the deepest one is the reason.
 */
export interface ServiceReason {
  message: string;
  context?: string;
}

export function serviceReason(data: unknown): ServiceReason | undefined {
  const messages: string[] = [];
  let level = data;
  for (let depth = 0; depth <= REASON_DEPTH && isRecord(level); depth++) {
    const message = level.message;
    if (typeof message === 'string' && message.trim() !== '') messages.push(message);
    level = level.data;
  }
  const message = messages.at(-1);
  if (message === undefined) return undefined;
  const context = messages[0];
  return context === message ? { message } : { message, context };
}

/** A reason as one text: the specific message, then the outer one it was found under. */
export function reasonText(reason: ServiceReason): string {
  return reason.context === undefined ? reason.message : `${reason.message} (the service's summary: ${reason.context})`;
}

/**
 * What a finished operation's answer carries besides its outcome: `data`, when it says anything. The
 * spec profile's echo of the operation's own id (`{operation_id}`) says nothing and is left out.
 */
export function operationData(data: unknown, operationId?: string): unknown {
  const inner = field(data, 'data');
  if (inner === undefined || inner === null) return undefined;
  if (isRecord(inner) && Object.keys(inner).length === 1 && inner.operation_id === operationId) return undefined;
  return inner;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function field(data: unknown, name: string): unknown {
  return typeof data === 'object' && data !== null && !Array.isArray(data) ? (data as Record<string, unknown>)[name] : undefined;
}
