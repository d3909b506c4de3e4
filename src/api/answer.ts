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

/** The body's `message`, when it is text. */
export function bodyMessage(data: unknown): string | undefined {
  const message = field(data, 'message');
  return typeof message === 'string' ? message : undefined;
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
export type WriteAnswer = { kind: 'accepted'; operationId: string } | { kind: 'refused'; status: number; message?: string } | { kind: 'done' };

export function writeAnswer(data: unknown): WriteAnswer {
  const status = bodyStatus(data);
  if (status !== undefined && status >= 400) return { kind: 'refused', status, message: bodyMessage(data) };
  const operationId = bodyOperationId(data);
  return operationId ? { kind: 'accepted', operationId } : { kind: 'done' };
}

function field(data: unknown, name: string): unknown {
  return typeof data === 'object' && data !== null && !Array.isArray(data) ? (data as Record<string, unknown>)[name] : undefined;
}
