import { ACTIONS, restorePoint } from '../actions/index.js';
import { creates } from '../api/endpoints.js';
import { clearsCache } from '../health/spec.js';
import { stepHealthUrl, type Plan, type Step, type TaskSummary } from './plan.js';

/**
 * How long a run of a plan should take, from its first write to its last answer. The run is bound by
 * the rate budget: every call (writes, polls, the reads a guarded write makes) takes a slot, so a
 * wave's calls take calls/rate, and creating calls at most their own limit when it is known. A wave
 * of a task that waits ends when its calls are made or, if later, when the operation of its last
 * write has ended (and a backup's before it, for `backup_first`); waves pause between them. Tasks
 * run one after another. Pure: the rates and durations are given.
 */
export interface EstimateInput {
  /** Calls a second the budget allows (after headroom). */
  perSecond: number;
  /** Creating calls a second, when the service's separate limit is known. @default no separate limit */
  createPerSecond?: number;
  /** How long an operation of each action takes (ms), when an earlier run taught it. */
  learned: ReadonlyMap<string, number>;
  /** What an operation of an action nothing taught is taken to last. @default DEFAULT_OPERATION_MS */
  defaultOperationMs?: number;
  /** Time available (a window's length, or until --not-after), to say what would be left. */
  availableMs?: number;
}

/** A stated guess for operations nothing taught: the real service's theme updates and backups take tens of seconds. */
export const DEFAULT_OPERATION_MS = 30_000;

/**
 * Polls per operation of a waiting task: the Watcher polls each close to its predicted end, about
 * once a piece once it has learned the kind (benchmark 17: 1.0–1.1); operations the listing confirms
 * in batches cost a few reads in all.
 */
const POLLS_PER_OPERATION = 1.1;
const POLLS_PER_CONFIRMED = 0.05;

export interface TaskEstimate {
  name: string;
  action: string;
  ms: number;
  writes: number;
  polls: number;
  /** The operation duration used (ms), and where it came from. */
  operationMs?: number;
  learned?: boolean;
}

export interface Estimate {
  ms: number;
  tasks: TaskEstimate[];
  /** With `availableMs`: steps (writes and restore points) the run would not reach. */
  left?: number;
}

export function estimateRun(plan: Plan, input: EstimateInput): Estimate {
  const tasks: TaskEstimate[] = [];
  let clock = 0;
  let left = 0;
  for (const task of plan.tasks) {
    const steps = plan.steps.filter((s) => s.task_index === task.index);
    if (steps.length === 0) continue;
    const action = ACTIONS.get(task.action);
    const learned = input.learned.get(task.action);
    const operationMs = learned ?? input.defaultOperationMs ?? DEFAULT_OPERATION_MS;
    const backupMs = input.learned.get(restorePoint.action.name) ?? input.defaultOperationMs ?? DEFAULT_OPERATION_MS;
    const pollRate = task.wait ? (action?.confirmBatch ? POLLS_PER_CONFIRMED : POLLS_PER_OPERATION) : 0;
    const waves = [...new Set(steps.map((s) => s.wave ?? 0))].sort((a, b) => a - b);
    const start = clock;
    let polls = 0;
    for (const [i, wave] of waves.entries()) {
      const inWave = steps.filter((s) => (s.wave ?? 0) === wave);
      const sent = waveMs(inWave, task, pollRate, input);
      polls += sent.polls;
      // The polls of early operations fill the time the last ones run: a wave ends when its calls are
      // all made, or its last operation (after the last write) has ended, whichever is later.
      const tail = task.wait ? operationMs + (task.backup_first ? backupMs : 0) : 0;
      const ms = task.wait ? Math.max(sent.ms, sent.writesMs + tail) : sent.ms;
      if (input.availableMs !== undefined) left += leftOf(inWave, clock, sent.ms, input.availableMs);
      clock += ms + (i < waves.length - 1 ? (task.rollout?.pause_ms ?? 0) : 0);
    }
    tasks.push({
      name: task.name,
      action: task.action,
      ms: clock - start,
      writes: steps.filter((s) => s.role !== 'backup').length,
      polls: Math.round(polls),
      ...(task.wait ? { operationMs, learned: learned !== undefined } : {}),
    });
  }
  return { ms: clock, tasks, ...(input.availableMs === undefined ? {} : { left }) };
}

/** A wave's calls at the budget's rate, its creating calls at most at their own; and its writes alone. */
function waveMs(steps: Step[], task: TaskSummary, pollRate: number, input: EstimateInput): { ms: number; writesMs: number; polls: number } {
  const backups = steps.filter((s) => s.role === 'backup').length;
  // Each operation is polled; a restore point's backup list is read once; a guarded write's cache
  // clear (health.clear_cache) is one more call, whose operation is polled.
  const clears = task.health && clearsCache(task.health) ? steps.filter((s) => stepHealthUrl(s) !== undefined).length : 0;
  const polls = steps.length * pollRate + (task.backup_first ? backups : 0) + clears * (1 + POLLS_PER_OPERATION);
  const creating = steps.filter((s) => creates(s.endpoint)).length;
  const atLimit = (calls: number) => Math.max((calls / input.perSecond) * 1000, input.createPerSecond ? (creating / input.createPerSecond) * 1000 : 0);
  return { ms: atLimit(steps.length + polls), writesMs: atLimit(steps.length), polls };
}

/** Steps of a wave sent from `at` over `ms` that fall after `available`. */
function leftOf(steps: Step[], at: number, ms: number, available: number): number {
  if (at + ms <= available) return 0;
  if (at >= available) return steps.length;
  return Math.ceil(steps.length * (1 - (available - at) / ms));
}
