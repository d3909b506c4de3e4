import type { ItemChange, Target } from '../actions/action.js';
import { ACTIONS } from '../actions/index.js';
import { ITEM_WRITES } from '../actions/item-writes.js';
import { writtenUpdates } from '../actions/items-update.js';
import { itemKey, itemOf, refFrom, refOf, type Kind } from '../inventory/kinds.js';
import type { QuarantineBreak, QuarantineTable } from '../inventory/quarantine-table.js';
import type { RetryClear, RetryFailure } from '../inventory/retry-table.js';
import type { Plan, Step } from '../plan/plan.js';
import { versionKey } from '../util/item-version.js';
import type { JournalState } from './journal.js';
import { writeVerdict } from './may-pass.js';
import { UNDONE, type LoggedError, type StepResult } from './types.js';

/**
 * What an item write's end teaches the company's quarantine and retries (issue 48), pure: the app
 * records it after a run's steps end (app/withheld-record.ts), and the executor may add a run's own
 * breaks to the quarantine table it holds (QuarantineTable.add), so that a version that broke one site
 * is sent to no other later in the same run.
 */
export interface WriteEnd {
  action: string;
  target: Target;
  body?: unknown;
  precondition?: string;
  updates?: ItemChange[];
  /**
   * The write went alone under its look (no `rollout.together` partner, no guard shared with its
   * environment's other writes: Step.guard_group): only then does a
   * pinned write that broke its site name its version. False where that is not known (a report's row).
   */
  alone: boolean;
  result: Pick<StepResult, 'status' | 'http_status' | 'error' | 'reason' | 'restored' | 'undone' | 'isolation' | 'logged' | 'health' | 'attempts' | 'failure'>;
}

/** The kind of item a write updates, if it is an item write on an environment. */
export function kindOf(end: Pick<WriteEnd, 'action' | 'target'>): Kind | undefined {
  return end.target.env_id ? ACTIONS.get(end.action)?.items : undefined;
}

/**
 * The versions a write's end shows broke its site: the culprits isolation found, each seen breaking it
 * alone; and a pinned write (one item, its version judged) that broke its site and was put back from
 * its restore point, whatever `on_broken` isolates. A write a restore undid for another's sake names none.
 */
export function breaksOf(end: WriteEnd, at: number): QuarantineBreak[] {
  const kind = kindOf(end);
  const { result: r, target } = end;
  if (!kind || !target.env_id) return [];
  const where = {
    env_id: target.env_id,
    ...(target.site ? { site: target.site } : {}),
    ...(target.environment ? { environment: target.environment } : {}),
    at,
  };
  const culprits = r.isolation?.culprits ?? [];
  if (culprits.length > 0) return culprits.map((c) => ({ ...refFrom(c), version: c.to, ...where, why: culpritWhy(end, c) }));
  const pinned = ITEM_WRITES[kind].pinnedOf(end.body);
  // Put back from its restore point, or by its items' own files (health.undo: items_first): either way its write broke the site.
  const restored = (r.restored && (r.restored.status === 'succeeded' || r.restored.status === 'unknown')) || r.undone?.status === 'succeeded';
  if (!pinned || !end.alone || !restored || r.isolation || r.reason?.startsWith(UNDONE)) return [];
  return [{ ...refOf(kind, pinned.name), version: pinned.update_version, ...where, why: brokeWhy(end) }];
}

/** A plan's write with its result, as its end teaches the stores: a write the run's quarantine trimmed carried what it sent, not the plan's updates. */
export function writeEndOf(step: Step, result: StepResult): WriteEnd {
  const { action, target } = step;
  const { body, precondition, updates } = result.sent ?? step;
  return { action, target, body, precondition, updates, alone: step.joins === undefined && step.guard_group === undefined, result };
}

/**
 * The versions a run's writes show broke a site, as their results stand (`results`: those the caller
 * settled), each dated by the first journal record that showed that break (`putBack`): when it
 * happened, never when a reader (a resume, `status`) saw it. One per environment and version, the
 * earliest. `since`: the time of a break no record shows (a state made by hand): the run's start.
 */
export function journalBreaks(plan: Plan, results: ReadonlyMap<string, StepResult>, putBack: JournalState['putBack'], since: number): QuarantineBreak[] {
  const found = new Map<string, QuarantineBreak>();
  for (const step of plan.steps) {
    const result = results.get(step.id);
    if (!result || step.role) continue;
    const seen = putBack.get(step.id) ?? [];
    for (const b of breaksOf(writeEndOf(step, result), since)) {
      const key = breakKey(b);
      const first = seen.find((s) => breaksOf(writeEndOf(step, s.result), s.at).some((e) => breakKey(e) === key));
      const dated = first ? { ...b, at: first.at } : b;
      const known = found.get(key);
      if (known === undefined || dated.at < known.at) found.set(key, dated);
    }
  }
  return [...found.values()].sort((a, b) => a.at - b.at);
}

/** One break per environment and version (`6.0` is `6.0.0`). */
function breakKey(b: QuarantineBreak): string {
  const item = itemOf(b)!;
  return JSON.stringify([b.env_id, itemKey(item.kind, item.name), versionKey(b.version)]);
}

/**
 * The error line that named the culprit (the write's, or the round that broke the site with it alone),
 * else what that round's check showed, else the write's check. A line naming another item (an older
 * breakage's, read without a look before it after a resume) is no word on this one.
 */
function culpritWhy(end: WriteEnd, c: ItemChange): string {
  const item = itemOf(c)!;
  const naming = (l: LoggedError | undefined) => (l && itemOf(l)?.kind === item.kind && itemOf(l)?.name === item.name ? l.line : undefined);
  const round = end.result.isolation?.rounds.find((r) => r.status === 'broken' && r.names.length === 1 && r.names[0] === item.name);
  return (
    naming(end.result.logged) ??
    naming(round?.logged) ??
    (round?.health?.after ? `the site's check after it: ${round.health.after}` : undefined) ??
    checkWhy(end)
  );
}

function brokeWhy(end: WriteEnd): string {
  return end.result.logged?.line ?? checkWhy(end);
}

function checkWhy(end: WriteEnd): string {
  const r = end.result;
  if (r.health?.after) return `the site's check after the write: ${r.health.after}`;
  return r.reason ?? 'it broke the site, which was restored';
}

/**
 * What a write's end adds to the retries (run/may-pass.ts): a failure of each update it carried when
 * its end may pass, in `run`; a clear of each item when it succeeded (`failed`: whether the table holds
 * anything to clear there, so a night of successes writes nothing).
 */
export function retriesOf(end: WriteEnd, run: string, at: number, failed: (envId: string, kind: Kind, name: string) => boolean): (RetryFailure | RetryClear)[] {
  const kind = kindOf(end);
  const envId = end.target.env_id;
  const verdict = writeVerdict(end.result);
  if (!kind || !envId || (verdict !== 'may pass' && verdict !== 'succeeded')) return [];
  const updates = writtenUpdates(kind, end);
  if (verdict === 'succeeded')
    return updates.filter((u) => failed(envId, kind, itemOf(u)!.name)).map((u) => ({ ...refFrom(u), cleared: true as const, env_id: envId, at }));
  const why = end.result.reason ?? end.result.error ?? `ended ${end.result.status}`;
  const { site, environment } = end.target;
  // A write read back `not_updated` failed for the items that stayed: the others moved, and wait for nothing.
  const stays = end.result.failure?.stays;
  const failedUpdates = stays ? updates.filter((u) => stays.some((s) => s.name === itemOf(u)!.name)) : updates;
  return failedUpdates.map((u) => ({
    ...refFrom(u),
    env_id: envId,
    version: u.to,
    ...(site ? { site } : {}),
    ...(environment ? { environment } : {}),
    run,
    at,
    why,
  }));
}

/**
 * The updates of a write the quarantine holds: what the executor asks before it sends a write, once a
 * run's own breaks were added to its table (QuarantineTable.add), so that a version that broke one site
 * tonight is sent to no other later in the same run. Empty for a write that is not an item write.
 */
export function quarantinedUpdates(step: Pick<WriteEnd, 'action' | 'target' | 'body' | 'precondition' | 'updates'>, table: QuarantineTable): ItemChange[] {
  const kind = kindOf(step);
  if (!kind) return [];
  return writtenUpdates(kind, step).filter((u) => table.has(kind, itemOf(u)!.name, u.to));
}
