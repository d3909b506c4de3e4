import type { Logger } from 'pino';
import { reasonText, writeAnswer } from '../api/answer.js';
import { backupCreatedMs } from '../api/backup-time.js';
import type { Backup } from '../api/types.js';
import { NotFoundError, SitefleetError } from '../errors.js';
import type { Plan, Step } from '../plan/plan.js';
import type { CallPort } from './caller.js';
import { PRIORITY } from './rate-budget.js';
import { decide, DEFAULT_RETRY } from './retry.js';
import type { NoSlotHeld, StopKind } from './types.js';
import type { Watcher, WatchOptions } from './watcher.js';

/**
 * Manual backup slots. The real service keeps at most five manual backups an environment; creating
 * one more fails and nothing is removed for you (shared/real-service-notes.md, "Backups and
 * restores"). Before sitefleet creates one (a restore point, a round of isolation, a task of manual backups)
 * it reads the environment's list and, when it is full, removes backups it made itself (its tags),
 * oldest first: never one a person took. A night's restore points are removed once the night judged
 * their writes, and `keep` keeps the newest of a series.
 */

/** The manual backups an environment keeps when the playbook does not say (the real service's five). */
export const DEFAULT_MANUAL_BACKUP_SLOTS = 5;

/** Every tag sitefleet gives a backup of its own begins so: restore points and isolation rounds. */
export const OWN_TAG_PREFIX = 'sitefleet-';

/** A backup's tag: the service keeps a manual backup's tag as its note. */
export function tagOfBackup(b: Backup): string {
  return b.note || b.name;
}

const oldestFirst = (a: Backup, b: Backup) => (backupCreatedMs(a.created_at) ?? 0) - (backupCreatedMs(b.created_at) ?? 0) || a.id - b.id;

export type RoomDecision = { kind: 'room'; remove: Backup[] } | { kind: 'full'; manual: number };

/**
 * What making room for one more manual backup does (`spared`: backups this run still needs):
 *
 * | manual backups held       | sitefleet's, not spared, oldest first | decision                         |
 * | ------------------------- | ------------------------------------- | -------------------------------- |
 * | fewer than `slots`        | any                                   | room: remove nothing             |
 * | `slots` + n − 1 (n over)  | at least n                            | room: remove the n oldest        |
 * | `slots` + n − 1           | fewer than n                          | full: held, `no_backup_slot`     |
 */
export function decideRoom(backups: readonly Backup[], slots: number, ours: (tag: string) => boolean, spared: ReadonlySet<number>): RoomDecision {
  const manual = backups.filter((b) => b.type === 'manual');
  const over = manual.length - slots + 1;
  if (over <= 0) return { kind: 'room', remove: [] };
  const removable = manual.filter((b) => ours(tagOfBackup(b)) && !spared.has(b.id)).sort(oldestFirst);
  return removable.length >= over ? { kind: 'room', remove: removable.slice(0, over) } : { kind: 'full', manual: manual.length };
}

/** The backups of a series beyond the newest `keep` (and those of `always`, a night's isolation rounds), never a spared one. */
export function beyondKeep(backups: readonly Backup[], series: RegExp, keep: number, spared: ReadonlySet<number>, always?: RegExp): Backup[] {
  const mine = backups.filter((b) => b.type === 'manual' && !spared.has(b.id));
  const kept = mine.filter((b) => series.test(tagOfBackup(b))).sort((a, b) => oldestFirst(b, a));
  return [...kept.slice(keep), ...(always ? mine.filter((b) => always.test(tagOfBackup(b))) : [])].sort(oldestFirst);
}

/** A tag's series: the same tag on any day (its `{{date}}` as any date), whole. */
export function seriesOf(tag: string, date: string): RegExp {
  const escape = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  const parts = tag.split(date).map(escape);
  return new RegExp(`^${parts.join('\\d{4}-\\d{2}-\\d{2}')}$`);
}

/** The tags the plan's own backups carry, as series: with the `sitefleet-` prefix, what a backup of sitefleet's is. */
export function oursIn(plan: Plan): (tag: string) => boolean {
  // One series a tag: a night's restore points share a few tags over hundreds of environments.
  const series = [...new Set(plan.steps.filter((s) => s.endpoint === 'addManualBackup').map(bodyTag))].map((tag) => seriesOf(tag, plan.date));
  return (tag) => tag.startsWith(OWN_TAG_PREFIX) || series.some((re) => re.test(tag));
}

function bodyTag(step: Pick<Step, 'body'>): string {
  const tag = (step.body as { tag?: unknown } | undefined)?.tag;
  return typeof tag === 'string' ? tag : '';
}

/** What making room needs: the run's calls and watcher, and whether a write may still start. */
export interface SlotPort {
  caller: CallPort;
  watcher: Watcher;
  watch: WatchOptions;
  logger: Logger;
  /** The most manual backups an environment keeps (`settings.manual_backup_slots`). */
  slots: number;
  ours: (tag: string) => boolean;
  /** Backups this run still needs (its restore points not yet judged): never removed to make room. */
  spared: ReadonlySet<number>;
}

/** Backups removed to make room, as a record keeps them (a backup step's `backup_slots`, a round's `room`). */
export function roomEntries(backups: readonly Backup[]): { id: number; tag: string; why: 'room' }[] {
  return backups.map((b) => ({ id: b.id, tag: tagOfBackup(b), why: 'room' }));
}

export type RoomOutcome =
  | { kind: 'room'; removed: Backup[]; earlier: Set<number> }
  | { kind: 'held'; held: NoSlotHeld; reason: string }
  | { kind: 'failed'; reason: string; stop?: { reason: string; kind: StopKind }; removed?: Backup[] };

/**
 * Makes room for one more manual backup of `envId`, tagged `tag`: reads its list, removes what
 * decideRoom says (each removal followed to its end), or says why not. `earlier`: the backups with
 * this tag already there (an earlier run's), which are never this one's restore point. Isolation
 * rounds call this before their backup too.
 */
export async function makeRoom(port: SlotPort, envId: string, tag: string, label: string): Promise<RoomOutcome> {
  let backups: Backup[];
  try {
    backups = (await port.caller.read('listBackups', { env_id: envId })).environment.backups;
  } catch (error) {
    if (!(error instanceof SitefleetError)) throw error;
    const reason = `could not read the backup list to count its manual backups: ${error.message}`;
    // A 401 is bad for every call after it: the run stops, as for any other call.
    const decision = decide(error, 1, true, DEFAULT_RETRY);
    return { kind: 'failed', reason, ...(decision.kind === 'stop' ? { stop: { reason: decision.reason, kind: decision.stop } } : {}) };
  }
  const earlier = new Set(backups.filter((b) => tagOfBackup(b) === tag).map((b) => b.id));
  const decision = decideRoom(backups, port.slots, port.ours, port.spared);
  if (decision.kind === 'full') return heldNoSlot(envId, label, decision.manual, port.slots);
  const { problem, removed } = await removeBackups(port, envId, decision.remove);
  // Those removed before the problem are gone all the same: the record says so.
  if (problem) return { kind: 'failed', reason: `could not make room for its backup: ${problem}`, removed };
  return { kind: 'room', removed: decision.remove, earlier };
}

function heldNoSlot(envId: string, label: string, manual: number, slots: number): RoomOutcome {
  const detail = `${label} holds ${manual} manual backups (settings.manual_backup_slots: ${slots}), none of them sitefleet's`;
  const override = `remove one of the manual backups of ${label} in the dashboard (or raise settings.manual_backup_slots if the service keeps more), then run again`;
  return {
    kind: 'held',
    held: { code: 'no_backup_slot', environment: envId, detail, override },
    reason: `no_backup_slot: ${detail}; nothing was sent: ${override}`,
  };
}

/** Removes backups one by one, each followed to its end (a slot is free only then); the first problem stops it. Returns those that went. */
export async function removeBackups(
  port: Omit<SlotPort, 'slots' | 'ours' | 'spared'>,
  envId: string,
  backups: readonly Backup[],
): Promise<{ problem?: string; removed: Backup[] }> {
  const removed: Backup[] = [];
  for (const b of backups) {
    const problem = await removeOne(port, b);
    if (problem) return { problem: `backup ${b.id} (${tagOfBackup(b)}): ${problem}`, removed };
    port.logger.info({ env: envId, backup_id: b.id, tag: tagOfBackup(b) }, 'removed a backup sitefleet made');
    removed.push(b);
  }
  return { removed };
}

async function removeOne(port: Omit<SlotPort, 'slots' | 'ours' | 'spared'>, b: Backup): Promise<string | undefined> {
  const outcome = await port.caller.withPlace(PRIORITY.write, 'deleteBackup', (place) =>
    port.caller.call('deleteBackup', { backup_id: String(b.id) }, undefined, true, { place, priority: PRIORITY.write }),
  );
  // Gone already (removed by a person, or by an earlier attempt that lost its answer): the slot is free.
  if (!outcome.ok) return outcome.error instanceof NotFoundError ? undefined : (outcome.decision?.reason ?? String(outcome.error));
  const answer = writeAnswer(outcome.value!.data);
  if (answer.kind === 'refused') return `the service answered status ${answer.status}${answer.reason ? `: ${reasonText(answer.reason)}` : ''}`;
  if (answer.kind === 'done') return undefined;
  const tracked = await port.watcher.watch(answer.operationId, 'backups:delete', port.watch).done;
  return tracked.state === 'succeeded' ? undefined : `its removal ${tracked.state}: ${tracked.message ?? ''}`;
}
