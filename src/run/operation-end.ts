import { reasonText } from '../api/answer.js';
import { ACTIONS } from '../actions/index.js';
import { depthExceededAt } from '../util/json-input.js';
import type { StepResult } from './types.js';
import type { Tracked } from './watcher.js';

/**
 * How much of an operation's `data` a step keeps: the ids of what it made fit many times over; a
 * large answer (a command's long output, echoed) is cut, with its size, so that a report of 20,000
 * steps stays a file one can open.
 */
export const OPERATION_DATA_CHARS = 4096;
/** How much of what a command printed a step keeps: `wp plugin list` of a large site fits. */
export const OUTPUT_CHARS = 65_536;
/** Nested deeper than this, `data` is not kept as JSON (a journal is read back only to depth 64). */
const DATA_DEPTH = 16;

/** An operation that ended: succeeded, failed, or given up on. */
export type Ended = Extract<Tracked, { state: 'succeeded' | 'failed' | 'unknown' }>;

/**
 * The end of a followed operation, as fields of its step's result. A failure's reason is the most
 * specific text the service gave (`reason`); the outer text it was nested under stays in `error`. A
 * success keeps what its answer carried (see `carried`).
 */
export function operationEnd(action: string, tracked: Ended, acceptedReason: string | null): Partial<StepResult> & Pick<StepResult, 'status' | 'reason'> {
  if (tracked.state === 'succeeded') return { status: 'succeeded', reason: acceptedReason, ...carried(action, tracked.data) };
  if (tracked.state === 'failed') {
    return { status: 'failed', reason: `operation failed: ${tracked.message}`, error: `OperationFailed: ${reasonText(tracked)}` };
  }
  return { status: 'unknown', reason: tracked.message };
}

/**
 * What an answer's `data` adds to its step: the data itself (exact JSON, or its beginning and size
 * when too large) and what the step's action reads in it (`readOperation`: the id of what it created,
 * what a command printed). An action that reads output says `null` when there is none.
 */
export function carried(action: string, data: unknown): Partial<StepResult> {
  const reading = ACTIONS.get(action)?.readOperation?.(data) ?? {};
  return { ...(data === undefined ? {} : kept(data)), ...(reading.created && { created: reading.created }), ...outputOf(reading.output) };
}

function kept(data: unknown): Partial<StepResult> {
  const text = JSON.stringify(data);
  if (text.length <= OPERATION_DATA_CHARS && depthExceededAt(text, DATA_DEPTH) === undefined) return { operation_data: data };
  return { operation_data_cut: { chars: text.length, head: text.slice(0, OPERATION_DATA_CHARS) } };
}

function outputOf(output: string | null | undefined): Partial<StepResult> {
  if (output === undefined) return {};
  if (output === null || output.length <= OUTPUT_CHARS) return { output };
  return { output: output.slice(0, OUTPUT_CHARS), output_cut: output.length };
}
