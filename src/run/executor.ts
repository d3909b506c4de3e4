import { setMaxListeners } from 'node:events';
import { setTimeout as sleep } from 'node:timers/promises';
import PQueue from 'p-queue';
import type { Logger } from 'pino';
import type { Plan, Step, TaskSummary } from '../plan/plan.js';
import type { Caller } from './caller.js';
import { failureBudget } from './failure-budget.js';
import { sendStep } from './send-step.js';
import { DEFAULT_TRACKING, trackOperation, type TrackOptions } from './track.js';
import { verifyThemeUpdates } from './verify.js';

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
  /** The answer to a step's call. */
  | { type: 'result'; step: Step; result: StepResult }
  /** A later word on an ended step: its operation finished, or verify found the work not done. */
  | { type: 'update'; step: Step; result: StepResult }
  | { type: 'stopped'; kind: StopKind; reason: string };

export type StopKind = 'auth' | 'budget' | 'interrupted';

export interface ExecuteOptions {
  caller: Caller;
  logger: Logger;
  concurrency: number;
  /** Replaces every task's failure budget (resume --max-failures). */
  overrideMaxFailures?: number | string;
  /** Ctrl-C: start nothing new, let the calls in flight end. */
  signal?: AbortSignal;
  /** Resolves `${VAR}` references left in bodies (secrets) at the moment of sending. */
  env?: Record<string, string | undefined>;
  /** Poll timing; a task's `timeout_ms` overrides `timeoutMs`. */
  tracking?: Partial<TrackOptions>;
  /** First wait before re-sending a step whose operation found the environment busy (default 2 s). */
  blockedBackoffMs?: number;
  /** Results known before this execution (resume): those steps are not sent again. */
  initial?: Map<string, StepResult>;
  onEvent?(event: RunEvent): void | Promise<void>;
}

export interface ExecuteOutcome {
  results: Map<string, StepResult>;
  /** Why the run stopped early: authentication, failure budget, interruption. */
  stopped?: { reason: string; kind: StopKind };
}

interface PendingOperation {
  step: Step;
  task: TaskSummary;
  acceptedAt: number;
  settled?: Promise<StepResult>;
}

const ENDED = new Set(['accepted', 'succeeded', 'failed', 'unknown']);
/** How the service says an environment is busy with another operation. */
const BLOCKED = /blocked by another process/i;
const MAX_BLOCKED_RETRIES = 3;
const BLOCKED_BACKOFF_MS = 2000;

/**
 * Runs a plan's steps: tasks in playbook order; within a task, rollout waves in order, and each wave's
 * steps in parallel under one queue (the concurrency cap) and one rate budget (inside the Caller).
 * Never two writes in flight on one environment, and a write waits until the environment's previous
 * operation finished (the service fails an operation on a busy environment). A 401 or a crossed
 * failure budget stops everything; steps not sent end `skipped`.
 */
export async function execute(plan: Plan, options: ExecuteOptions): Promise<ExecuteOutcome> {
  const results = new Map<string, StepResult>(options.initial ?? []);
  const queue = new PQueue({ concurrency: options.concurrency });
  // Stopping means starting no new call. Calls in flight are let end: cutting one would turn an
  // answer the server already gave into an unknown.
  const stopper = new AbortController();
  const stopStarting = options.signal ? AbortSignal.any([options.signal, stopper.signal]) : stopper.signal;
  // Every waiting step listens on this signal: thousands of listeners are expected, not a leak.
  setMaxListeners(0, stopper.signal, stopStarting);
  let stopped: ExecuteOutcome['stopped'];
  const stop = (reason: string, kind: StopKind) => {
    if (stopped) return;
    stopped = { reason, kind };
    stopper.abort();
    options.logger.warn({ reason }, 'run stopping');
    void options.onEvent?.({ type: 'stopped', kind, reason });
  };
  if (options.signal?.aborted) stop('interrupted', 'interrupted');
  options.signal?.addEventListener('abort', () => stop('interrupted', 'interrupted'), { once: true });

  const record = async (type: 'result' | 'update', step: Step, result: StepResult) => {
    results.set(step.id, result);
    await options.onEvent?.({ type, step, result });
  };
  const trackingFor = (task: TaskSummary): TrackOptions => ({
    ...DEFAULT_TRACKING,
    ...options.tracking,
    ...(task.timeout_ms ? { timeoutMs: task.timeout_ms } : {}),
    stopSignal: stopStarting,
  });

  /** The last accepted, untracked operation on each environment. */
  const lastOperation = new Map<string, PendingOperation>();
  const settle = (pending: PendingOperation): Promise<StepResult> => {
    pending.settled ??= (async () => {
      let accepted = results.get(pending.step.id)!;
      let acceptedAt = pending.acceptedAt;
      for (let blocked = 0; ; blocked++) {
        const tracked = await trackOperation(options.caller, accepted.operation_id!, trackingFor(pending.task), acceptedAt);
        if (tracked.state === 'untracked') {
          if ('auth' in tracked && tracked.auth) stop(tracked.message, 'auth');
          return accepted; // still accepted: `sitefleet status` can look again later
        }
        // The service refused to start the work because something else (another run, its own
        // jobs) occupies the environment: nothing happened, so even a creating call may go again.
        if (tracked.state === 'failed' && BLOCKED.test(tracked.message) && blocked < MAX_BLOCKED_RETRIES && !stopped) {
          options.logger.info({ step: pending.step.id, operation_id: accepted.operation_id }, 'environment busy; sending again');
          await sleep((options.blockedBackoffMs ?? BLOCKED_BACKOFF_MS) * 2 ** blocked, undefined, { signal: stopStarting }).catch(() => undefined);
          if (stopped) return accepted;
          // Journal first that the step is in question: if the process dies during the re-send, a
          // resume must not take the earlier (failed) operation for the step's answer and send again.
          await record('update', pending.step, { ...accepted, status: 'unknown', operation_id: null, reason: 'sent again after the environment was busy; no answer recorded' });
          const again = await sendStep(pending.step, options, stopStarting);
          const attempts = accepted.attempts + again.result.attempts;
          await record('update', pending.step, { ...again.result, attempts });
          if (again.stopRun) stop(again.result.reason!, 'auth');
          if (again.result.status !== 'accepted') return results.get(pending.step.id)!;
          accepted = results.get(pending.step.id)!;
          acceptedAt = performance.now();
          continue;
        }
        const status = tracked.state;
        const reason = status === 'succeeded' ? accepted.reason : status === 'failed' ? `operation failed: ${tracked.message}` : tracked.message;
        const final: StepResult = { ...accepted, status, reason };
        await record('update', pending.step, final);
        return final;
      }
    })();
    return pending.settled;
  };

  const stepsByTask = new Map<number, Step[]>();
  for (const step of plan.steps) {
    const list = stepsByTask.get(step.task_index) ?? [];
    list.push(step);
    stepsByTask.set(step.task_index, list);
  }

  for (const task of plan.tasks) {
    if (stopped) break;
    const steps = stepsByTask.get(task.index) ?? [];
    const budget = failureBudget(options.overrideMaxFailures ?? task.max_failures ?? plan.settings.max_failures, steps.length);
    const countFailure = (result: StepResult) => {
      if ((result.status === 'failed' || result.status === 'unknown') && budget.fail()) {
        stop(`failure budget exceeded in task "${task.name}": ${budget.describe()}`, 'budget');
      }
    };
    for (const step of steps) {
      const known = results.get(step.id);
      if (known) countFailure(known);
    }

    const runOne = async (step: Step) => {
      const known = results.get(step.id);
      if (known && ENDED.has(known.status)) {
        // Resume: an operation accepted before the interruption is still tracked when the task waits.
        if (known.status === 'accepted' && task.wait && known.operation_id) countFailure(await settle({ step, task, acceptedAt: performance.now() }));
        return;
      }
      if (stopped) return;
      const previous = step.lock ? lastOperation.get(step.lock) : undefined;
      if (previous) {
        await settle(previous);
        if (stopped) return;
      }
      const { result, stopRun } = await sendStep(step, options, stopStarting);
      const acceptedAt = performance.now();
      if (result.attempts === 0 && stopped) return; // never sent: ends skipped below
      await record('result', step, result);
      if (stopRun) return stop(result.reason!, 'auth');
      let final = result;
      if (result.status === 'accepted') {
        const pending: PendingOperation = { step, task, acceptedAt };
        if (task.wait) final = await settle(pending);
        else if (step.lock) lastOperation.set(step.lock, pending);
      }
      countFailure(final);
    };

    const waves = [...new Set(steps.map((s) => s.wave ?? 0))].sort((a, b) => a - b);
    for (const [i, wave] of waves.entries()) {
      if (stopped) break;
      const locks = new Map<string, Promise<void>>();
      const pending = steps
        .filter((s) => (s.wave ?? 0) === wave)
        .map((step) => {
          const enqueue = () => (stopped && !results.has(step.id) ? Promise.resolve() : queue.add(() => runOne(step)));
          const before = step.lock ? locks.get(step.lock) : undefined;
          const done = before ? before.then(enqueue) : enqueue();
          if (step.lock) locks.set(step.lock, done.then(() => undefined, () => undefined));
          return done;
        });
      await Promise.allSettled(pending);
      await queue.onIdle();
      const pause = task.rollout?.pause_ms ?? 0;
      if (!stopped && i < waves.length - 1 && pause > 0) {
        options.logger.info({ task: task.name, wave, pause_ms: pause }, 'wave done; pausing before the next');
        await sleep(pause, undefined, { signal: stopStarting }).catch(() => undefined);
      }
    }
    if (task.verify && !stopped) {
      for (const [step, result] of await verifyThemeUpdates(options.caller, plan.company, steps, results)) await record('update', step, result);
    }
  }

  if (stopped) {
    for (const step of plan.steps) {
      if (!results.has(step.id)) {
        await record('result', step, { step_id: step.id, status: 'skipped', http_status: null, operation_id: null, attempts: 0, error: null, reason: `not sent: run stopped (${stopped.reason})` });
      }
    }
  }
  return { results, stopped };
}
