import type { Logger } from 'pino';
import { AbortedError, SitefleetError } from '../errors.js';
import type { CallPort } from './caller.js';
import { PRIORITY, type Priority } from './rate-budget.js';
import { decide, DEFAULT_RETRY } from './retry.js';
import type { StopKind } from './types.js';

import { newFatal } from './fatal-line.js';
import type { KindRow } from '../inventory/kinds.js';
import type { LoggedError } from './types.js';

export { newFatal, newFatalLines, fatalLines, namedItem, cutLine, LOGGED_LINE_MAX } from './fatal-line.js';

/** The most lines one read may ask for (real-service-notes.md, "Logs"). */
export const MAX_LOG_LINES = 20_000;
/**
 * Lines read by default: enough that a fatal error is still in the tail after the notices a busy
 * site writes on every request between the failed check and the read, small enough to be one answer.
 */
export const DEFAULT_LOG_LINES = 1_000;

/**
 * The logs endpoint's own limit beside the general one: public clients say about 35 reads a minute
 * (real-service-notes.md, "Limits"). Log reads take a slot of this rule as well (Caller's `logs`
 * budget), so a burst of them waits for its own rule and never takes the writes' share of the general one.
 */
export const LOGS_RATE = { limit: 35, periodMs: 60_000 } as const;

/**
 * Who waits for a log read. The one before a write is a read like any other: it waits behind writes
 * and the polls they depend on. The one after a failed check names the culprit of a broken site that
 * is waiting for its restore: it goes first.
 */
export const LOG_READ_PRIORITY = { before: PRIORITY.poll, after: PRIORITY.urgent } as const satisfies Record<string, Priority>;

export interface ErrorLogOptions {
  /** Before the write, or after a failed check (its priority: LOG_READ_PRIORITY). */
  when: keyof typeof LOG_READ_PRIORITY;
  /** @default DEFAULT_LOG_LINES */
  lines?: number;
  logger?: Logger;
  /** A read not sent yet is dropped when it aborts (the read before a write the run stopped from starting). */
  stopSignal?: AbortSignal;
}

/**
 * The error log's last lines, or why they could not be read. A refused read that stops every call
 * after it (a 401) says so in `stop`, for the caller to stop the run as other reads do.
 */
export type ErrorLogRead = { ok: true; text: string } | { ok: false; reason: string; stop?: { reason: string; kind: StopKind } };

/**
 * Reads the environment's PHP error log (`GET …/logs?file_name=error&lines=N`) through the caller's
 * budgets. Never throws for what the service answers: an odd shape, a 5xx, a lost connection or the
 * run stopping is "could not read" (the culprit is then found by rounds alone); only a defect that is
 * no answer of the service is thrown.
 */
export async function readErrorLog(caller: CallPort, envId: string, options: ErrorLogOptions): Promise<ErrorLogRead> {
  const lines = Math.min(MAX_LOG_LINES, Math.max(1, Math.floor(options.lines ?? DEFAULT_LOG_LINES)));
  try {
    const answer: unknown = await caller.read('getLogs', { env_id: envId }, undefined, {
      query: { file_name: 'error', lines },
      priority: LOG_READ_PRIORITY[options.when],
      ...(options.stopSignal ? { stopSignal: options.stopSignal } : {}),
    });
    const text = logsOf(answer);
    if (text === undefined) return couldNot(options.logger, envId, 'the answer holds no log text');
    return { ok: true, text };
  } catch (error) {
    if (!(error instanceof SitefleetError)) throw error;
    const decision = decide(error, 1, true, DEFAULT_RETRY);
    if (decision.kind === 'stop') return { ok: false, reason: decision.reason, stop: { reason: decision.reason, kind: decision.stop } };
    return couldNot(options.logger, envId, error.message, error instanceof AbortedError);
  }
}

/** What the log said after a failed check: the item a new fatal line names (if any), or the stop a refused read calls for. */
export type LoggedCulprit = { logged?: LoggedError; stop?: undefined } | { logged?: undefined; stop: { reason: string; kind: StopKind } };

/**
 * After a failed check: reads the log again and names the item of the first fatal line that was not
 * in `before` (the read before the write, when it could be read). A log that cannot be read names
 * nothing (the rounds find the culprit alone); a 401 is a stop.
 */
export async function loggedCulprit(
  caller: CallPort,
  envId: string,
  before: ErrorLogRead | undefined,
  kinds: readonly KindRow[],
  options: Omit<ErrorLogOptions, 'when'> = {},
): Promise<LoggedCulprit> {
  const after = await readErrorLog(caller, envId, { ...options, when: 'after' });
  if (!after.ok) return after.stop ? { stop: after.stop } : {};
  const logged = newFatal(before?.ok ? before.text : undefined, after.text, kinds);
  return logged ? { logged } : {};
}

/**
 * One environment's error log across a write and its isolation rounds: `before()` right before the
 * write, `after()` after each failed check (a round's included), which names the item of the first
 * fatal line new since the last look. Each look moves the baseline, so a round is never blamed for the
 * lines of the breakage before it (a round within the same second as the one before, whose line PHP
 * stamps alike, names nothing: the rounds decide the culprit whatever). A 401 on either read calls
 * `stop`; a log that cannot be read names nothing.
 */
export class ErrorLogLooks {
  #last: ErrorLogRead | undefined;

  constructor(
    private readonly caller: CallPort,
    private readonly envId: string,
    private readonly kinds: readonly KindRow[],
    private readonly options: Omit<ErrorLogOptions, 'when'> & { stop(reason: string, kind: StopKind): void },
  ) {}

  /**
   * `stopSignal`: the run's sends. A write a stop keeps from starting needs no baseline: its read,
   * waiting for the logs' rule, is dropped, and leaves the rule's slots to the reads after a failed
   * check of the lives that finish.
   */
  async before(stopSignal?: AbortSignal): Promise<void> {
    this.#last = await this.#read('before', stopSignal);
  }

  async after(): Promise<LoggedError | undefined> {
    const read = await this.#read('after');
    if (!read.ok) return undefined;
    const logged = newFatal(this.#last?.ok ? this.#last.text : undefined, read.text, this.kinds);
    this.#last = read;
    return logged;
  }

  async #read(when: ErrorLogOptions['when'], stopSignal?: AbortSignal): Promise<ErrorLogRead> {
    const read = await readErrorLog(this.caller, this.envId, { ...this.options, when, ...(stopSignal ? { stopSignal } : {}) });
    if (!read.ok && read.stop) this.options.stop(read.stop.reason, read.stop.kind);
    return read;
  }
}

/** `environment.container_info.logs` when it is a string (the answer's schema says so; a fake caller or a proxy may not). */
function logsOf(answer: unknown): string | undefined {
  const logs = field(field(field(answer, 'environment'), 'container_info'), 'logs');
  return typeof logs === 'string' ? logs : undefined;
}

function field(value: unknown, name: string): unknown {
  return typeof value === 'object' && value !== null ? (value as Record<string, unknown>)[name] : undefined;
}

function couldNot(logger: Logger | undefined, env: string, why: string, quiet = false): ErrorLogRead {
  logger?.[quiet ? 'info' : 'warn']({ env, err: why }, 'could not read the error log: the culprit is looked for by rounds alone');
  return { ok: false, reason: `could not read the error log: ${why}` };
}
