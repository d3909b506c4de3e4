import { versionKey } from '../util/item-version.js';
import { itemKey, itemOf, type ItemRef, type Kind } from './kinds.js';
import { unreadNames, type UnreadLine } from './unread-line.js';

/**
 * Writes that failed for a reason that may pass (a 5xx, a timeout, a site down before the write: the
 * decision table is run/may-pass.ts), per environment, item and version, so that the next nights wait
 * 1, 2, 4, 8, 16 days, then 30 (`settings.retry_backoff`) instead of sending it again every night. The
 * stores (coord/) write these entries and the planner judges by the table: one schema here, below both.
 */

/** One failure of an item update to `version` on `env_id`. */
export type RetryFailure = ItemRef & {
  env_id: string;
  version: string;
  site?: string;
  environment?: string;
  /** The run it failed in: a run's end recorded again (a resume, each `status`) is one failure, not two. */
  run: string;
  at: number;
  why: string;
};

/**
 * What ends a run of failures: an update of the item that succeeded on an environment (`env_id`, any
 * version), a person's `sitefleet retry clear` (a `version`, or every version, on every environment),
 * or a plan that found the failure means nothing any more (`why`: inventory/withheld-prune.ts).
 * Every failure it covers recorded before `at` is folded away.
 */
export type RetryClear = ItemRef & { cleared: true; at: number; env_id?: string; version?: string; why?: string };

export type RetryEntry = RetryFailure | RetryClear;

export const isClear = (e: RetryEntry): e is RetryClear => 'cleared' in e;

/** Where an item version stands on one environment: its failures since the last clear, and when it may be tried again. */
export interface RetryState {
  failures: RetryFailure[];
  /** When the next try may go: the last failure plus the backoff of its rank. */
  retry_at: number;
}

/**
 * The failures and the clears of a company, folded whatever the order of their lines. A failure is
 * dated by its run's start, never by when it was recorded, so a run's end recorded again (a resume,
 * `status`) after a clear stays cleared; and a compaction keeps the clears that may still fold
 * something away (`kept`), so that none is undone later.
 */
export class RetryTable {
  readonly #failures = new Map<string, RetryFailure[]>();
  /** By item key: a failure is judged against its item's clears only (a plan may write one per environment). */
  readonly #clears = new Map<string, RetryClear[]>();
  /** The store's lines this release could not read: each naming an item holds it (unread-line.ts). */
  readonly unread: UnreadLine[] = [];

  static of(entries: readonly RetryEntry[]): RetryTable {
    return new RetryTable().add(entries);
  }

  /** Adds entries, in place. */
  add(entries: readonly RetryEntry[]): this {
    for (const e of entries) {
      const item = itemOf(e);
      if (!item) continue;
      if (isClear(e)) {
        const key = itemKey(item.kind, item.name);
        const known = this.#clears.get(key);
        if (known) known.push(e);
        else this.#clears.set(key, [e]);
      } else {
        const key = keyOf(e.env_id, item.kind, item.name);
        const known = this.#failures.get(key);
        if (known) known.push(e);
        else this.#failures.set(key, [e]);
      }
    }
    return this;
  }

  /**
   * A line the store could not read. One naming an item holds that item (its version, its environment,
   * where it names them); one naming nothing holds nothing: what it may hide is a write that failed for
   * a reason that may pass, sent again sooner, which the run's guards meet as any write.
   */
  hold(line: UnreadLine): this {
    this.unread.push(line);
    return this;
  }

  /** The line the store could not read that holds `version` of the item on the environment, if one does. */
  unreadFor(envId: string, kind: Kind, name: string, version: string): UnreadLine | undefined {
    return this.unread.find((l) => unreadNames(l, kind, name, version, envId));
  }

  /** Whether a clear folds `f` away. */
  cleared(f: RetryFailure): boolean {
    const item = itemOf(f)!;
    return (this.#clears.get(itemKey(item.kind, item.name)) ?? []).some((c) => covers(c, f));
  }

  /** The failures of the item on the environment no clear folded away, earliest first, every version. */
  standingOn(envId: string, kind: Kind, name: string): RetryFailure[] {
    const clears = (this.#clears.get(itemKey(kind, name)) ?? []).filter((c) => c.env_id === undefined || c.env_id === envId);
    const once = new Map<string, RetryFailure>();
    for (const f of this.#failures.get(keyOf(envId, kind, name)) ?? []) {
      if (clears.some((c) => covers(c, f))) continue;
      const run = JSON.stringify([versionKey(f.version), f.run]);
      const known = once.get(run);
      if (known === undefined || f.at < known.at) once.set(run, f);
    }
    return [...once.values()].sort((a, b) => a.at - b.at);
  }

  /**
   * Where `version` of the item stands on the environment under `backoff` (durations in ms, the last
   * repeating): undefined when it never failed there since the last clear.
   */
  state(envId: string, kind: Kind, name: string, version: string, backoff: readonly number[]): RetryState | undefined {
    const failures = this.standingOn(envId, kind, name).filter((f) => versionKey(f.version) === versionKey(version));
    if (failures.length === 0 || backoff.length === 0) return undefined;
    const wait = backoff[Math.min(failures.length, backoff.length) - 1]!;
    return { failures, retry_at: failures.at(-1)!.at + wait };
  }

  /** Whether anything of the item on the environment is waiting to be cleared (a success records a clear only then). */
  failed(envId: string, kind: Kind, name: string): boolean {
    return this.standingOn(envId, kind, name).length > 0;
  }

  /** Every failure that stands, by environment and item: what `retry list` shows. */
  standing(): RetryFailure[] {
    return [...this.#failures.values()].flatMap((fs) => {
      const item = itemOf(fs[0]!)!;
      return this.standingOn(fs[0]!.env_id, item.kind, item.name);
    });
  }

  /**
   * What a compaction keeps: the failures that stand, and every clear no later clear covers (of each
   * item, environment or all, version or all, the latest): an event no later reader undoes.
   */
  kept(): RetryEntry[] {
    const clears = [...this.#clears.values()].flatMap((cs) => {
      const latest: RetryClear[] = [];
      for (const c of [...cs].sort((a, b) => b.at - a.at)) if (!latest.some((k) => within(c, k))) latest.push(c);
      return latest.reverse();
    });
    return [...this.standing(), ...clears];
  }
}

const keyOf = (envId: string, kind: Kind, name: string) => JSON.stringify([envId, itemKey(kind, name)]);

/** Whether clear `c` folds failure `f` away (its item is the caller's to match): recorded before it, on what it names. */
function covers(c: RetryClear, f: RetryFailure): boolean {
  return c.at >= f.at && (c.env_id === undefined || c.env_id === f.env_id) && (c.version === undefined || versionKey(c.version) === versionKey(f.version));
}

/** Whether clear `k`, as late or later, folds away all that `c` does (same item). */
function within(c: RetryClear, k: RetryClear): boolean {
  return (
    k.at >= c.at &&
    (k.env_id === undefined || k.env_id === c.env_id) &&
    (k.version === undefined || (c.version !== undefined && versionKey(k.version) === versionKey(c.version)))
  );
}
