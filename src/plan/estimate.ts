import { restorePoint } from '../actions/index.js';
import { creates } from '../api/endpoints.js';
import { clearsCache } from '../health/spec.js';
import { CLEAR_GAP_MS, countWave, DOCUMENTED_CREATE_PER_SECOND, slotsOf, type WaveCounts } from './call-costs.js';
import { databaseCommands } from './database-commands.js';
import type { Plan, Step, TaskSummary } from './plan.js';

/**
 * How long a run of a plan should take, from its first write to its last answer. The run is bound by
 * its lanes: every call takes a slot of the general budget, and creating calls (restore points,
 * backups, domains) one of their own lane as well, at `createPerSecond` (create_rate_limit), else the
 * real service's documented 5 a minute; call-costs.ts says what each class of call costs. A wave of a
 * task that waits ends when its calls are made or, if later, when its last life has ended: an
 * environment's life starts when its creating call leaves its lane (or its write the general one) and
 * waits for its backup's operation, its writes' operations, each write's cache clear and look (one
 * clear per environment per 10 s); the wave's read-back follows its lives, and waves pause between
 * them. Tasks run one after another. Pure: the rates and durations are given.
 */
export interface EstimateInput {
  /** Calls a second the budget allows (after headroom). */
  perSecond: number;
  /** Creating calls a second (create_rate_limit). @default DOCUMENTED_CREATE_PER_SECOND */
  createPerSecond?: number;
  /** How long an operation of each action takes (ms), when an earlier run taught it. */
  learned: ReadonlyMap<string, number>;
  /** How long a guarded write's cache clear and look after take (ms) per action, when an earlier run taught it. */
  learnedAfter?: ReadonlyMap<string, number>;
  /** What an operation of an action nothing taught is taken to last (a cache clear's too). @default DEFAULT_OPERATION_MS */
  defaultOperationMs?: number;
  /** Time available (a window's length, or until --not-after), to say what would be left. */
  availableMs?: number;
}

/** A stated guess for operations nothing taught: the real service's theme updates and backups take tens of seconds. */
export const DEFAULT_OPERATION_MS = 30_000;

export interface TaskEstimate {
  name: string;
  action: string;
  ms: number;
  writes: number;
  polls: number;
  restorePoints: number;
  clears: number;
  readBacks: number;
  /** Commands after the writes (WordPress's database step, with.after_update). */
  databaseSteps: number;
  /** Time the task's creating calls take in their lane alone (ms). */
  createMs: number;
  /** The operation duration used (ms), and where it came from. */
  operationMs?: number;
  learned?: boolean;
  /** A restore point's backup operation (ms), with backup_first, and whether an earlier run taught it. */
  backupMs?: number;
  backupLearned?: boolean;
  /** A guarded write's clear and look after (ms), and whether an earlier run taught it. */
  afterMs?: number;
  afterLearned?: boolean;
}

export interface Estimate {
  ms: number;
  tasks: TaskEstimate[];
  /** The creating-call lane used (a second), and whether it is the documented default. */
  createPerSecond: number;
  createAssumed: boolean;
  /** With `availableMs`: steps (writes and restore points) the run would not reach. */
  left?: number;
}

/** What one life of a task waits for (ms): its restore point's backup, each write's operation, the clear and look after each. */
interface LifeTimes {
  backupMs: number;
  operationMs: number;
  afterMs: number;
  clears: boolean;
}

export function estimateRun(plan: Plan, input: EstimateInput): Estimate {
  const createPerSecond = input.createPerSecond ?? DOCUMENTED_CREATE_PER_SECOND;
  const tasks: TaskEstimate[] = [];
  let clock = 0;
  let left = 0;
  for (const task of plan.tasks) {
    const steps = plan.steps.filter((s) => s.task_index === task.index);
    if (steps.length === 0) continue;
    const times = lifeTimes(task, input);
    const waves = [...new Set(steps.map((s) => s.wave ?? 0))].sort((a, b) => a - b);
    const start = clock;
    const sum: WaveCounts = {
      writes: 0,
      creatingWrites: 0,
      polls: 0,
      restorePoints: 0,
      clears: 0,
      readBacks: 0,
      databaseSteps: 0,
      slotReads: 0,
      slotDeletes: 0,
    };
    let createMs = 0;
    for (const [i, wave] of waves.entries()) {
      const inWave = steps.filter((s) => (s.wave ?? 0) === wave);
      const counts = countWave(task, inWave);
      for (const key of Object.keys(sum) as (keyof WaveCounts)[]) sum[key] += counts[key];
      const { general, create } = slotsOf({ ...counts, readBacks: 0 });
      const lanesMs = Math.max((general / input.perSecond) * 1000, (create / createPerSecond) * 1000);
      createMs += (create / createPerSecond) * 1000;
      const lives =
        task.wait || task.backup_first ? livesMs(inWave, { ...input, createPerSecond }, times, task.wait === true, (s) => databaseCommands(task, s).length) : 0;
      // The read-back reads what the wave's lives wrote, once they all ended.
      const ms = Math.max(lanesMs, lives) + (counts.readBacks / input.perSecond) * 1000;
      if (input.availableMs !== undefined) left += leftOf(inWave, clock, lanesMs, input.availableMs);
      clock += ms + (i < waves.length - 1 ? (task.rollout?.pause_ms ?? 0) : 0);
    }
    tasks.push({
      name: task.name,
      action: task.action,
      ms: clock - start,
      writes: sum.writes,
      polls: Math.round(sum.polls),
      restorePoints: sum.restorePoints,
      clears: sum.clears,
      readBacks: sum.readBacks,
      databaseSteps: sum.databaseSteps,
      createMs,
      ...(task.wait ? { operationMs: times.operationMs, learned: input.learned.has(task.action) } : {}),
      ...(task.backup_first ? { backupMs: times.backupMs, backupLearned: input.learned.has(restorePoint.action.name) } : {}),
      ...(times.clears ? { afterMs: times.afterMs, afterLearned: input.learnedAfter?.has(task.action) === true } : {}),
    });
  }
  return { ms: clock, tasks, createPerSecond, createAssumed: input.createPerSecond === undefined, ...(input.availableMs === undefined ? {} : { left }) };
}

/** What a life of `task` waits for: learned from an earlier run where it taught it, else the stated default. */
function lifeTimes(task: TaskSummary, input: EstimateInput): LifeTimes {
  const assumed = input.defaultOperationMs ?? DEFAULT_OPERATION_MS;
  const clears = task.wait === true && task.health !== undefined && clearsCache(task.health);
  return {
    backupMs: task.backup_first ? (input.learned.get(restorePoint.action.name) ?? assumed) : 0,
    operationMs: input.learned.get(task.action) ?? assumed,
    // Without a lesson: the clear's operation (as long as any); the look itself is a page, not an operation.
    afterMs: task.health && task.wait ? (input.learnedAfter?.get(task.action) ?? (clears ? assumed : 0)) : 0,
    clears,
  };
}

/**
 * When the wave's last life ends (ms from its start). Lives take their environment's turn in plan
 * order: an environment's life starts when its creating call (its restore point, or a creating write)
 * leaves the creating-call lane, and its first write no sooner than its share of the general budget;
 * then its backup's operation, and each of its writes in turn (operation, clear, look; a guard
 * group's writes one after another, then one clear and look for all of them), its clears at least
 * CLEAR_GAP_MS apart.
 */
function livesMs(steps: Step[], input: EstimateInput & { createPerSecond: number }, t: LifeTimes, waits: boolean, databaseOf: (s: Step) => number): number {
  const envs = new Map<string, { creating: number; writes: number; looks: Set<string>; database: number; order: number }>();
  let creating = 0;
  for (const s of steps) {
    const key = s.target.env_id ?? s.lock ?? s.id;
    const env = envs.get(key) ?? { creating: -1, writes: 0, looks: new Set<string>(), database: 0, order: envs.size };
    if (env.creating < 0 && (s.role === 'backup' || creates(s.endpoint))) env.creating = creating++;
    if (s.role !== 'backup') env.writes++;
    // One guard per environment: a guard group's writes share one clear and look (Step.guard_group).
    if (s.role !== 'backup') env.looks.add(s.guard_group ?? s.id);
    env.database += databaseOf(s);
    envs.set(key, env);
  }
  const perLife = steps.length / envs.size;
  let end = 0;
  for (const env of envs.values()) {
    const fromLane = env.creating < 0 ? 0 : (env.creating / input.createPerSecond) * 1000;
    const fromBudget = (((env.order + 1) * perLife) / input.perSecond) * 1000;
    const looks = env.looks.size;
    const sends = env.writes * (waits ? t.operationMs : 0);
    const cycle = sends / Math.max(1, looks) + t.afterMs;
    const gaps = t.clears ? Math.max(0, CLEAR_GAP_MS - cycle) * Math.max(0, looks - 1) : 0;
    // Each database step (wp core update-db after a core write) is one more operation the life waits for.
    const database = waits ? env.database * t.operationMs : 0;
    end = Math.max(end, Math.max(fromLane, fromBudget) + t.backupMs + sends + looks * t.afterMs + database + gaps);
  }
  return end;
}

/** Steps of a wave sent from `at` over `ms` that fall after `available`. */
function leftOf(steps: Step[], at: number, ms: number, available: number): number {
  if (at + ms <= available) return 0;
  if (at >= available) return steps.length;
  return Math.ceil(steps.length * (1 - (available - at) / ms));
}
