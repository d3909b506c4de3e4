import { setMaxListeners } from 'node:events';
import PQueue from 'p-queue';
import type { Logger } from 'pino';
import type { Plan, Step } from '../plan/plan.js';
import type { Caller } from './caller.js';
import { failureBudget, type FailureBudget } from './failure-budget.js';

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

export type RunEvent =
  | { type: 'attempt'; step: Step; attempt: number }
  | { type: 'result'; step: Step; result: StepResult }
  | { type: 'stopped'; reason: string };

export interface ExecuteOptions {
  caller: Caller;
  logger: Logger;
  concurrency: number;
  /** The playbook's default failure budget; a task's own `max_failures` wins. */
  maxFailures?: number | string;
  signal?: AbortSignal;
  /** Resolves `${VAR}` references left in bodies (secrets) at the moment of sending. */
  env?: Record<string, string | undefined>;
  onEvent?(event: RunEvent): void | Promise<void>;
}

export interface ExecuteOutcome {
  results: Map<string, StepResult>;
  /** Why the run stopped early: authentication, failure budget, interruption. */
  stopped?: { reason: string; kind: 'auth' | 'budget' | 'interrupted' };
}

/**
 * Runs a plan's steps: tasks in playbook order, each task's steps in parallel under one queue (the
 * concurrency cap) and one rate budget (inside the Caller), never two writes in flight on one
 * environment. A 401 or a crossed failure budget stops everything; unstarted steps end `skipped`.
 */
export async function execute(plan: Plan, options: ExecuteOptions): Promise<ExecuteOutcome> {
  const results = new Map<string, StepResult>();
  const queue = new PQueue({ concurrency: options.concurrency });
  // Stopping (Ctrl-C, a 401, a crossed failure budget) means starting no new call. Calls in flight
  // are let end: cutting one would turn an answer the server already gave into an unknown.
  const stopper = new AbortController();
  const stopStarting = options.signal ? AbortSignal.any([options.signal, stopper.signal]) : stopper.signal;
  // Every waiting step listens on this signal: thousands of listeners are expected, not a leak.
  setMaxListeners(0, stopper.signal, stopStarting);
  let stopped: ExecuteOutcome['stopped'];
  const stop = (reason: string, kind: NonNullable<ExecuteOutcome['stopped']>['kind']) => {
    if (stopped) return;
    stopped = { reason, kind };
    // Queued steps see `stopped` when they come up and end at once; nothing new is sent.
    stopper.abort();
    options.logger.warn({ reason }, 'run stopping');
    void options.onEvent?.({ type: 'stopped', reason });
  };
  options.signal?.addEventListener('abort', () => stop('interrupted', 'interrupted'), { once: true });

  const finish = async (step: Step, result: StepResult) => {
    results.set(step.id, result);
    await options.onEvent?.({ type: 'result', step, result });
  };

  const stepsByTask = new Map<number, Step[]>();
  for (const step of plan.steps) {
    const list = stepsByTask.get(step.task_index) ?? [];
    list.push(step);
    stepsByTask.set(step.task_index, list);
  }

  for (const task of plan.tasks) {
    const steps = stepsByTask.get(task.index) ?? [];
    if (stopped) break;
    const budget: FailureBudget = failureBudget(task.max_failures ?? options.maxFailures, steps.length);
    const locks = new Map<string, Promise<void>>();
    const runOne = async (step: Step) => {
      if (stopped) return;
      const { result, stopRun } = await sendStep(step, options, stopStarting);
      await finish(step, result);
      if (stopRun) {
        stop(result.reason!, 'auth');
      } else if (result.status === 'failed' || result.status === 'unknown') {
        if (budget.fail()) stop(`failure budget exceeded in task "${task.name}": ${budget.describe()}`, 'budget');
      }
    };
    const pending = steps.map((step) => {
      const enqueue = () => (stopped ? Promise.resolve() : queue.add(() => runOne(step)));
      if (!step.lock) return enqueue();
      const chained = (locks.get(step.lock) ?? Promise.resolve()).then(enqueue);
      locks.set(step.lock, chained.then(() => undefined, () => undefined));
      return chained;
    });
    await Promise.allSettled(pending);
    await queue.onIdle();
  }

  if (stopped) {
    for (const step of plan.steps) {
      if (!results.has(step.id)) {
        await finish(step, { step_id: step.id, status: 'skipped', http_status: null, operation_id: null, attempts: 0, error: null, reason: `not sent: run stopped (${stopped.reason})` });
      }
    }
  }
  return { results, stopped };
}

async function sendStep(step: Step, options: ExecuteOptions, stopSignal: AbortSignal): Promise<{ result: StepResult; stopRun?: boolean }> {
  const body = step.body === undefined ? undefined : resolveSecrets(step.body, options.env ?? process.env);
  const outcome = await options.caller.call(step.endpoint, step.params, body, step.idempotent, {
    stopSignal,
    beforeAttempt: (attempt) => options.onEvent?.({ type: 'attempt', step, attempt }),
  });
  const base = { step_id: step.id, attempts: outcome.attempts, http_status: null, operation_id: null, error: null, reason: step.note ?? null };
  if (outcome.ok) {
    const { status, data } = outcome.result!;
    const fields = (data ?? {}) as Record<string, unknown>;
    if (status === 202 && typeof fields.operation_id === 'string') return { result: { ...base, status: 'accepted', http_status: status, operation_id: fields.operation_id } };
    const result: StepResult = { ...base, status: 'succeeded', http_status: status };
    if (fields.create_wp_admin_user === false) result.reason = 'the service answered create_wp_admin_user: false (the user probably exists already)';
    if (typeof fields.login_link === 'string') result.output = { login_link: fields.login_link };
    return { result };
  }
  const error = outcome.error as { status?: number; message?: string; name?: string };
  const decision = outcome.decision!;
  const status = decision.kind === 'unknown' ? 'unknown' : decision.kind === 'failed' && outcome.attempts === 0 ? 'skipped' : 'failed';
  return {
    result: {
      ...base,
      status,
      http_status: typeof error.status === 'number' ? error.status : null,
      error: `${error.name ?? 'Error'}: ${error.message ?? String(error)}`,
      reason: decision.reason,
    },
    stopRun: decision.kind === 'stop',
  };
}

/** `${VAR}` references left in a body are secrets; they are filled in only here, on the way out. */
export function resolveSecrets(body: unknown, env: Record<string, string | undefined>): unknown {
  if (typeof body === 'string') return body.replace(/\$\{([A-Za-z_][A-Za-z0-9_]*)\}/g, (whole, name: string) => env[name] ?? whole);
  if (Array.isArray(body)) return body.map((v) => resolveSecrets(v, env));
  if (typeof body === 'object' && body !== null) return Object.fromEntries(Object.entries(body).map(([k, v]) => [k, resolveSecrets(v, env)]));
  return body;
}
