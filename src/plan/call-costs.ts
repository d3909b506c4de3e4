import { ACTIONS } from '../actions/index.js';
import { readsBackStep, type Action } from '../actions/action.js';
import { creates } from '../api/endpoints.js';
import { clearsCache } from '../health/spec.js';
import { KIND_TABLE, BASE_KIND } from '../inventory/kinds.js';
import { databaseCommands } from './database-commands.js';
import { guardCount, stepHealthUrl, type Step, type TaskSummary } from './plan.js';

/**
 * What each class of call a run makes costs the estimate: the slots it takes of the general budget
 * and of the creating-call lane, and what a life waits for after it. A decision table, as retry.ts
 * has one: the estimate (estimate.ts) counts each class in a wave and reads its cost here, never
 * naming an action.
 *
 * | class         | counted per                                     | general slots       | creating slots | a life waits for                       |
 * | write         | write (not a restore point)                     | 1                   | 1 if it creates| its operation, when the task waits     |
 * | poll          | operation waited for                            | 1.1 (listing: 0.05) | 0              | -                                      |
 * | restore point | environment of a backup_first task              | 1 + 1.1 polls + 1   | 1              | the backup's operation                 |
 * | cache clear   | guarded write (health.clear_cache)              | 1 + 1.1 polls       | 0              | the clear's operation; 1 / 10 s an env |
 * | look          | guarded write (before and after)                | 0 (the site's page) | 0              | the page (learned with the clear)      |
 * | read-back     | wave (company listing) or written environment   | 1                   | 0              | - (after the wave's lives)             |
 * | database step | command after a write (wp core update-db)       | 1 + 1.1 polls       | 0              | its operation                          |
 * | slot read     | manual backup (its room), and once more a restore point judged or a `keep` | 1 | 0          | -                                      |
 * | slot delete   | a restore point judged healthy; a `keep` backup's oldest | 1 + 1.1 polls | 0         | - (after the task's lives)             |
 * | pause         | gap between two waves                           | 0                   | 0              | rollout.pause                          |
 */
export type CallClass = 'write' | 'poll' | 'restore point' | 'cache clear' | 'read-back' | 'database step' | 'slot read' | 'slot delete';

export interface CallCost {
  /** Slots of the general budget one of these takes (its own call, its polls, its reads). */
  general: number;
  /** Slots of the creating-call lane one takes. */
  create: number;
}

/**
 * Polls per operation: the Watcher polls each close to its predicted end, about once a piece once
 * it has learned the kind (benchmark 17: 1.0–1.1); operations the listing confirms in batches cost
 * a few reads in all.
 */
export const POLLS_PER_OPERATION = 1.1;
export const POLLS_PER_CONFIRMED = 0.05;

/**
 * The creating-call lane when the playbook does not give one (`create_rate_limit`): the real
 * service's documented 5 resource-creation requests a minute, beside 120 requests a minute
 * (real-service-notes.md, "Limits": two MCP servers' documentation; one keeps a 5-a-minute lane).
 */
export const DOCUMENTED_CREATE_PER_SECOND = 5 / 60;

/** The vendor's docs: manual cache clears are limited to one every 10 seconds per environment (real-service-notes.md, "Clearing a site's cache"). */
export const CLEAR_GAP_MS = 10_000;

export const CALL_COSTS: Readonly<Record<CallClass, CallCost>> = {
  // A creating write's slot of its lane is counted apart (WaveCounts.creatingWrites).
  write: { general: 1, create: 0 },
  poll: { general: 1, create: 0 },
  // The backup itself (a creating call), its poll, and the backup list read that finds its id.
  'restore point': { general: 1 + POLLS_PER_OPERATION + 1, create: 1 },
  // The clear and its poll: the look after waits for it.
  'cache clear': { general: 1 + POLLS_PER_OPERATION, create: 0 },
  'read-back': { general: 1, create: 0 },
  // A WP-CLI command after the write and its poll (life/database-step.ts): the life waits for it.
  'database step': { general: 1 + POLLS_PER_OPERATION, create: 0 },
  // The backup list read before each manual backup (backup-slots.ts makeRoom), and again to prune once judged (slot-keeper.ts).
  'slot read': { general: 1, create: 0 },
  // A DELETE of a backup sitefleet made, followed to its end (a slot is free only then).
  'slot delete': { general: 1 + POLLS_PER_OPERATION, create: 0 },
};

/** What a wave does, counted by class. */
export interface WaveCounts {
  writes: number;
  /** Writes whose endpoint creates (backups.create, a domain): each a slot of the creating-call lane. */
  creatingWrites: number;
  /** Polls of the writes' operations (a fraction each: see POLLS_PER_*). */
  polls: number;
  restorePoints: number;
  clears: number;
  readBacks: number;
  /** Commands after the writes (WordPress's database step, with.after_update), each with its poll. */
  databaseSteps: number;
  /** Backup list reads of the manual slots (slot-keeper.ts): before each manual backup, and to prune after the task. */
  slotReads: number;
  /** Backups removed (each a DELETE and its poll): a restore point once its writes were judged healthy, a `keep` series' oldest. */
  slotDeletes: number;
}

/** A wave's calls by class, as the run makes them (the executor, the life, verify.ts). */
export function countWave(task: TaskSummary, steps: readonly Step[]): WaveCounts {
  const action = ACTIONS.get(task.action);
  const writes = steps.filter((s) => s.role !== 'backup');
  const pollRate = task.wait ? (action?.confirmBatch ? POLLS_PER_CONFIRMED : POLLS_PER_OPERATION) : 0;
  // A guarded write's look after comes only once its operation ended: only a waiting task looks; a guard group looks once.
  const clears = task.wait && task.health && clearsCache(task.health) ? guardCount(writes.filter((s) => stepHealthUrl(s) !== undefined)) : 0;
  return {
    writes: writes.length,
    creatingWrites: writes.filter((s) => creates(s.endpoint)).length,
    polls: writes.length * pollRate,
    restorePoints: steps.length - writes.length,
    clears,
    readBacks: action ? readBackReads(action, task, writes) : 0,
    databaseSteps: task.wait ? writes.reduce((n, s) => n + databaseCommands(task, s).length, 0) : 0,
    ...slotCalls(task, steps),
  };
}

/**
 * The manual slots' calls (slot-keeper.ts): each manual backup reads its environment's list first
 * (room). Once the task ended, a restore point whose writes ended healthy (only a waiting task sees
 * that) is read for and removed; a `keep` series is read and, a night once full, loses its oldest.
 * A DELETE to make room where the slots are full is not known without the list, and not counted:
 * in the steady state the removals after the task keep a slot free.
 */
function slotCalls(task: TaskSummary, steps: readonly Step[]): Pick<WaveCounts, 'slotReads' | 'slotDeletes'> {
  const backups = steps.filter((s) => s.endpoint === 'addManualBackup');
  const points = backups.filter((s) => s.role === 'backup').length;
  const kept = task.keep_backups !== undefined ? backups.length - points : 0;
  const judged = task.wait ? points : 0;
  return { slotReads: backups.length + judged + kept, slotDeletes: judged + kept };
}

/** Slots a wave takes of the general budget and of the creating-call lane. */
export function slotsOf(counts: WaveCounts): { general: number; create: number } {
  const rows: [CallClass, number][] = [
    ['write', counts.writes],
    ['poll', counts.polls],
    ['restore point', counts.restorePoints],
    ['cache clear', counts.clears],
    ['read-back', counts.readBacks],
    ['database step', counts.databaseSteps],
    ['slot read', counts.slotReads],
    ['slot delete', counts.slotDeletes],
  ];
  const general = rows.reduce((sum, [c, n]) => sum + CALL_COSTS[c].general * n, 0);
  const create = rows.reduce((sum, [c, n]) => sum + CALL_COSTS[c].create * n, 0) + counts.creatingWrites;
  return { general, create };
}

/**
 * The reads that read a wave's writes back once its lives ended (executor.readBack → verify.ts):
 * none when the action reads none back and the task does not `verify`; else one read of the
 * company listing (the site listing for WordPress), or one per written environment where that
 * listing lags behind a write (plugins).
 */
function readBackReads(action: Action, task: TaskSummary, writes: readonly Step[]): number {
  const judged = writes.filter((s) => (task.verify === true && action.verify !== undefined) || readsBackStep(action, s));
  if (judged.length === 0) return 0;
  if (KIND_TABLE[action.items ?? BASE_KIND].readBackFrom !== 'environments') return 1;
  return new Set(judged.map((s) => s.target.env_id)).size;
}
