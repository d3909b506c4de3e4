import type { Step, TaskSummary } from '../../plan/plan.js';
import { stepHealthUrl } from '../../plan/plan.js';
import { databaseLeft } from './database-step.js';
import type { IsolationRound, StepResult, StepStatus } from '../types.js';

/**
 * The life of a write, as Terraform's resource lifecycle has one (create → poll → read): its states,
 * and what moves it from one to the next. A guarded write goes through all of them; an unguarded one
 * skips the looks, the clear, the restore and isolation. `ended` carries the step's final status.
 * The executor schedules lives (waves, budgets, windows, concurrency); the states are the life's.
 */
export type LifeState =
  /** Planned: waits for its restore point, its environment's turn and a place among the calls in flight. */
  | 'waiting'
  /** Its page (and pages, and error log) looked at before the write: the baseline. */
  | 'looking_before'
  /** The write on its way: journaled before it leaves, so a death here is read back as unknown or sent again when safe. */
  | 'sending'
  /** Accepted: its operation followed to its end (the watcher, or a listing read for a batch). */
  | 'following'
  /**
   * WordPress (or an item with a step of its own) moved: its database step run through WP-CLI and
   * followed (`wp core update-db`; `with.after_update`), each command journaled before it leaves.
   */
  | 'updating_database'
  /** The page cache cleared before the look after (health.clear_cache). */
  | 'clearing'
  /** Its page looked at after the write (and compared with the baseline). */
  | 'looking_after'
  /** What the environment runs read back, with its wave, before the write counts as done. */
  | 'reading_back'
  /** Broken by the write (health.undo: items_first): its items put back by their own files through WP-CLI, looked at again (life/undo-items.ts). */
  | 'undoing'
  /** Broken by the write: put back from its restore point, followed, looked at again. */
  | 'restoring'
  /** Put back and healthy: its updates sent again in rounds to find the one that broke the site. */
  | 'isolating'
  | 'ended';

/** One row of the table: from a state, on an event, to the next state (and, for `ended`, the step's status). */
export interface Transition {
  from: LifeState;
  on: string;
  to: LifeState;
  status?: StepStatus;
}

/**
 * The table (docs/development.md holds it too). A stop (the failure budget, the window, the first
 * Ctrl-C) takes only `waiting` to `ended` (skipped): every later state finishes. A halt (a second
 * Ctrl-C, settings.finish_within run out, a rejected token) leaves each life where it stands,
 * journaled: `resume` goes on from there (lifeAt).
 */
export const LIFE: readonly Transition[] = [
  { from: 'waiting', on: 'restore point taken (or none needed)', to: 'looking_before' },
  { from: 'waiting', on: 'restore point failed', to: 'ended', status: 'skipped' },
  { from: 'waiting', on: 'stopped (budget, window, Ctrl-C) or quarantined', to: 'ended', status: 'skipped' },
  { from: 'waiting', on: 'unguarded write', to: 'sending' },
  { from: 'looking_before', on: 'healthy (or no page to check)', to: 'sending' },
  { from: 'looking_before', on: 'address refused', to: 'ended', status: 'skipped' },
  { from: 'looking_before', on: 'not seen healthy (unseen, broken_before)', to: 'ended', status: 'held' },
  { from: 'looking_before', on: 'broken before, when_broken_before: update', to: 'sending' },
  { from: 'sending', on: 'accepted (202 with an operation)', to: 'following' },
  { from: 'sending', on: 'done at once (2xx)', to: 'ended', status: 'succeeded' },
  { from: 'sending', on: 'refused (4xx, 5xx after retries)', to: 'ended', status: 'failed' },
  { from: 'sending', on: 'no answer, not safe to repeat', to: 'ended', status: 'unknown' },
  { from: 'following', on: 'operation succeeded, WordPress or an after_update item moved', to: 'updating_database' },
  { from: 'following', on: 'operation succeeded, guarded, cache cleared first', to: 'clearing' },
  { from: 'following', on: 'operation succeeded, guarded', to: 'looking_after' },
  { from: 'following', on: 'operation succeeded, unguarded', to: 'reading_back' },
  { from: 'following', on: 'operation failed', to: 'ended', status: 'failed' },
  { from: 'following', on: 'operation unknown (timed out, lost)', to: 'ended', status: 'unknown' },
  { from: 'following', on: 'task does not wait', to: 'ended', status: 'accepted' },
  { from: 'updating_database', on: 'ended (its outcome kept), guarded, cache cleared first', to: 'clearing' },
  { from: 'updating_database', on: 'ended (its outcome kept), guarded', to: 'looking_after' },
  { from: 'updating_database', on: 'succeeded, unguarded', to: 'reading_back' },
  { from: 'updating_database', on: 'not succeeded, unguarded', to: 'ended', status: 'held' },
  { from: 'updating_database', on: 'after a restore (the write stays failed)', to: 'ended', status: 'failed' },
  { from: 'clearing', on: 'cleared', to: 'looking_after' },
  { from: 'clearing', on: 'not available (404, 405: the look goes on, marked)', to: 'looking_after' },
  { from: 'clearing', on: 'not cleared', to: 'looking_after' },
  { from: 'looking_after', on: 'healthy, pages as before', to: 'reading_back' },
  { from: 'looking_after', on: 'healthy, its database step not succeeded', to: 'ended', status: 'held' },
  { from: 'looking_after', on: 'healthy through a cache not cleared', to: 'ended', status: 'held' },
  { from: 'looking_after', on: 'pages changed (visual)', to: 'ended', status: 'held' },
  { from: 'looking_after', on: 'broken, on_broken: restore, undo: items_first', to: 'undoing' },
  { from: 'looking_after', on: 'broken, on_broken set', to: 'restoring' },
  { from: 'looking_after', on: 'broken, no on_broken', to: 'ended', status: 'failed' },
  { from: 'looking_after', on: 'halted before the look', to: 'ended', status: 'held' },
  { from: 'reading_back', on: 'runs what was sent', to: 'ended', status: 'succeeded' },
  { from: 'reading_back', on: 'runs another version', to: 'ended', status: 'failed' },
  { from: 'undoing', on: 'put back by its items, healthy again, on_broken: isolate', to: 'isolating' },
  { from: 'undoing', on: 'put back by its items, healthy again', to: 'ended', status: 'failed' },
  { from: 'undoing', on: 'not put back by its items, or still broken', to: 'restoring' },
  { from: 'restoring', on: 'restored healthy, on_broken: isolate', to: 'isolating' },
  { from: 'restoring', on: 'restored (or the restore failed)', to: 'ended', status: 'failed' },
  { from: 'restoring', on: 'restored a core write (WordPress moved back)', to: 'updating_database' },
  { from: 'isolating', on: 'rounds ended (found, not reproduced, stopped)', to: 'ended', status: 'failed' },
];

/** The next state on an event, by the table; an event the state has no row for is a defect, never a guess. */
export function next(from: LifeState, on: string): Transition {
  const row = LIFE.find((t) => t.from === from && t.on === on);
  if (!row) throw new Error(`a write's life has no move from ${from} on "${on}"`);
  return row;
}

/**
 * Where a journaled write's life stands, read from its record: the state `resume` goes on from
 * (`ended`: nothing left). One reading for resume's plan and for the executor, so the two never disagree.
 *
 * | record                                                             | state         |
 * | its items being put back by their own files (undone: sending)      | undoing       |
 * | a restore accepted, not seen to end; or one a halt kept from leaving| restoring     |
 * | isolating; or put back healthy (restored, or by its items' files), isolate, never begun | isolating |
 * | accepted, its task waits (not a restore point)                     | following     |
 * | a database step journaled not ended (sending, accepted, not sent)   | updating_database |
 * | succeeded with no look after, or held not_looked, on a guarded task| looking_after |
 * | anything else                                                      | ended         |
 */
export function lifeAt(task: TaskSummary, step: Step, known: StepResult): LifeState {
  if (undoLeft(known)) return 'undoing';
  if (restoreLeft(known)) return 'restoring';
  if (task.health?.on_broken === 'isolate' && isolationLeft(step, known)) return 'isolating';
  if (known.status === 'accepted' && known.operation_id !== null && task.wait && step.role !== 'backup') return 'following';
  if (databaseLeft(known) && task.wait) return 'updating_database';
  if (lookLeft(known) && task.health !== undefined && task.wait && stepHealthUrl(step) !== undefined) return 'looking_after';
  return 'ended';
}

/** Its items being put back by their own files when a halt came (undo-items.ts): a resume sends again those not seen to succeed, then looks. */
export function undoLeft(known: StepResult): boolean {
  return known.undone?.status === 'sending';
}

/**
 * A restore under way (accepted, not seen to end), or one a halt kept from leaving (`not sent` with
 * its restore point known: only a halt sends none then): the site is broken until it has gone.
 */
export function restoreLeft(known: StepResult): boolean {
  const restored = known.restored;
  if (restored?.status === 'accepted') return Boolean(restored.operation_id);
  // Not sent, its restore point known, and not found healthy again since (restoreIfBroken): only a halt sends none then.
  return restored?.status === 'not sent' && restored.backup_id !== null && restored.health === undefined;
}

/** A guarded write whose look after is still to come: its operation ended and nobody looked (or a halt held it for that). */
export function lookLeft(known: StepResult): boolean {
  return (known.status === 'succeeded' && !known.health) || known.held?.code === 'not_looked';
}

/** Isolation left under way, or due after a restore that ended healthy (the run died between the two). */
export function isolationLeft(step: Step, known: StepResult): boolean {
  if (known.isolation) return known.isolation.outcome === 'isolating';
  // Put back healthy: from its restore point, or (health.undo: items_first) by its items' own files.
  const back = known.restored ?? known.undone;
  return (step.updates?.length ?? 0) > 0 && back?.status === 'succeeded' && back.health?.outcome === 'healthy';
}

/**
 * Where an isolation round stands: a round is a write's life of its own, through the same states
 * (its restore point, its writes, their operations, the clear and the look, a restore of a site it
 * broke). isolation-round.ts takes each round on from here, in this process or in a resume.
 *
 * | round record                                                        | state     |
 * | healthy, failed, unknown; or broken and its restore ended            | ended     |
 * | broken by_items, put back by its files and seen healthy              | ended     |
 * | no restore point yet (not by_items)                                  | waiting   |
 * | sending (its writes on their way: some may have gone)                | sending   |
 * | accepted (its operations to follow, then the clear and the look)     | following |
 * | broken by_items, its files not put back yet (none sent, or sending)  | restoring |
 * | broken, its restore not asked for, sending, accepted, or kept by a halt | restoring |
 */
export function roundAt(round: IsolationRound): LifeState {
  if (round.status === 'failed' || round.status === 'unknown' || round.status === 'healthy') return 'ended';
  if (round.status === 'broken' && round.by_items && !round.restored) {
    // Its items' files first (health.undo: items_first); a restore only once they could not heal the site.
    if (round.undone === undefined || round.undone.status === 'sending') return 'restoring';
    if (round.undone.status === 'succeeded' && round.undone.health?.outcome === 'healthy') return 'ended';
  }
  if (round.status === 'broken') {
    const restore = round.restored?.status;
    // Not sent, its backup known and the site not seen since: only a halt sends none then (as restoreLeft reads a write's).
    const halted = restore === 'not sent' && round.restored!.backup_id !== null && round.restored!.health === undefined;
    return restore === undefined || restore === 'accepted' || restore === 'sending' || halted ? 'restoring' : 'ended';
  }
  if (!round.restore_point && !round.by_items) return 'waiting';
  return round.status === 'sending' ? 'sending' : 'following';
}
