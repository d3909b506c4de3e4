import type { ItemChange } from '../../actions/action.js';
import { nameOf } from '../../inventory/kinds.js';
import type { Step } from '../../plan/plan.js';
import { UNDONE, type Isolation, type StepResult } from '../types.js';

/**
 * One guard per environment (Step.guard_group): a task's pinned writes to one environment share one
 * look before, one cache clear and look after. The write whose look it was (the group's last that
 * did its work: the holder) carries what came after it for all of them: the put-back by files, the
 * restore, isolation over every item of the group, as a bulk write's carries them for its items. The
 * other writes of the group (its mates) are told what became of their own item:
 *
 * | what the group's look found, and what followed     | a mate's write                           |
 * | healthy                                            | the group's look (lookAfterGroup)        |
 * | broken, put back by the items' files, healthy      | failed: its item back on its old version |
 * | broken, restored from the backup                   | failed, undone (restore.ts undoneWrites) |
 * | isolation ended: its item in a healthy round       | succeeded, with the group's look         |
 * | isolation ended: its item a culprit, or not sent   | failed, saying which                     |
 *
 * The holder too ends by its own item once isolation ended (settledHolder): its isolation record
 * tells the group's story, and its status whether its own update is in.
 *
 * Writes of a task another joins (`rollout.together`) are no guard group here: that look is the
 * partners', and its restore puts back both (together.ts).
 */

/** The holder's mates in a guard group without a partner task on its environment; undefined for a write that is no such group's. */
export function groupMates(steps: readonly Step[], holder: Step): Step[] | undefined {
  const env = holder.target.env_id;
  if (holder.guard_group === undefined || holder.joins !== undefined) return undefined;
  if (steps.some((s) => s.joins === holder.task_index && s.target.env_id === env)) return undefined;
  return steps.filter((s) => s.id !== holder.id && s.guard_group === holder.guard_group && s.task_index === holder.task_index);
}

/** The mates whose writes did their work and wait for the group's verdict (before any put-back). */
export function matesDone(mates: readonly Step[], results: ReadonlyMap<string, StepResult>): Step[] {
  return mates.filter((m) => results.get(m.id)?.status === 'succeeded' && results.get(m.id)!.health === undefined);
}

/** The mates the group's restore undid (undoneWrites): their items are isolation's to send again. */
export function matesUndone(mates: readonly Step[], results: ReadonlyMap<string, StepResult>): Step[] {
  return mates.filter((m) => results.get(m.id)?.reason?.startsWith(UNDONE) === true && results.get(m.id)!.status === 'failed');
}

/** What each write of the group carried: isolation takes all of them apart, as a bulk write's. */
export function groupUpdates(holder: readonly ItemChange[], mates: readonly Step[], results: ReadonlyMap<string, StepResult>): ItemChange[] {
  return [...mates.flatMap((m) => results.get(m.id)?.sent?.updates ?? m.updates ?? []), ...holder];
}

/** A mate put back by the items' files with the group (health.undo: items_first): its update is not on the site. */
export function putBackByFiles(mate: StepResult, holder: Step, after: StepResult): StepResult {
  return {
    ...mate,
    ...(after.health ? { health: after.health } : {}),
    status: 'failed',
    reason: `${UNDONE}put back by its files with its environment's other writes (the site's data kept), after the site was seen broken once they ended; the put-back is recorded on ${holder.precondition ?? holder.id}`,
  };
}

/** A mate once isolation over the group ended: in, a culprit, or not sent again. */
export function settledByIsolation(mate: Step, known: StepResult, holder: Step, ended: StepResult): StepResult {
  const iso: Isolation = ended.isolation!;
  const own = new Set((known.sent?.updates ?? mate.updates ?? []).map((u) => nameOf(u)));
  const mine = (list: readonly ItemChange[] | undefined) => (list ?? []).filter((u) => own.has(nameOf(u)));
  const words = (list: readonly ItemChange[]) => list.map((u) => `${nameOf(u)} ${u.from} → ${u.to}`).join(', ');
  const where = `isolation over its environment's writes, recorded on ${holder.precondition ?? holder.id}`;
  const health = ended.health ? { health: ended.health } : {};
  const { reason: _undone, ...rest } = known;
  if (mine(iso.culprits).length > 0)
    return { ...rest, ...health, status: 'failed', reason: `isolated: ${words(mine(iso.culprits))} broke the site and is back on the old version (${where})` };
  if (mine(iso.left).length > 0)
    return { ...rest, ...health, status: 'failed', reason: `not installed: ${words(mine(iso.left))} (${where} stopped: ${iso.reason ?? 'no reason given'})` };
  return {
    ...rest,
    ...health,
    status: 'succeeded',
    reason: `in: the site broke once its environment's writes ended and was restored; ${where}, sent this update again and the site stayed healthy`,
  };
}

/** The holder once isolation over its group ended: succeeded when its own update is in (isolation's record says the rest). */
export function settledHolder(holder: Step, ended: StepResult): StepResult {
  const iso = ended.isolation!;
  const own = new Set((ended.sent?.updates ?? holder.updates ?? []).map((u) => nameOf(u)));
  const out = [...iso.culprits, ...(iso.left ?? [])].some((u) => own.has(nameOf(u)));
  if (out || ended.status === 'succeeded' || iso.outcome === 'isolating') return ended;
  return { ...ended, status: 'succeeded', reason: `in: its update went in again in isolation over its environment's writes; ${ended.reason ?? ''}`.trimEnd() };
}

/**
 * What the writes of a guard group whose isolation ended (`ended`, the holder's result) say of their own
 * items, the holder last: the records settleGroup journals as isolation ends, and resume for a group a
 * kill left unsaid (life/isolation-step.ts, run/resume.ts). None once they were said.
 */
export function groupSettlement(steps: readonly Step[], holder: Step, ended: StepResult, results: ReadonlyMap<string, StepResult>): [Step, StepResult][] {
  if (!ended.isolation || ended.isolation.outcome === 'isolating') return [];
  const mates = groupMates(steps, holder);
  if (!mates) return [];
  const said = matesUndone(mates, results).map((mate): [Step, StepResult] => [mate, settledByIsolation(mate, results.get(mate.id)!, holder, ended)]);
  const settled = settledHolder(holder, ended);
  return settled === ended ? said : [...said, [holder, settled]];
}
