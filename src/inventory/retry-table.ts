import { versionKey } from '../util/item-version.js';
import { itemKey, itemOf, type ItemRef, type Kind } from './kinds.js';

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

/** The failures and the clears of a company, folded whatever the order of their lines. */
export class RetryTable {
  readonly #failures = new Map<string, RetryFailure[]>();
  /** By item key: a failure is judged against its item's clears only (a plan may write one per environment). */
  readonly #clears = new Map<string, RetryClear[]>();

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

  /** The failures of the item on the environment no clear folded away, earliest first, every version. */
  standingOn(envId: string, kind: Kind, name: string): RetryFailure[] {
    const clears = (this.#clears.get(itemKey(kind, name)) ?? []).filter((c) => c.env_id === undefined || c.env_id === envId);
    const once = new Map<string, RetryFailure>();
    for (const f of this.#failures.get(keyOf(envId, kind, name)) ?? []) {
      if (clears.some((c) => c.at >= f.at && (c.version === undefined || versionKey(c.version) === versionKey(f.version)))) continue;
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

  /** Every failure that stands, by environment and item: what `retry list` shows and what a compaction keeps. */
  standing(): RetryFailure[] {
    return [...this.#failures.values()].flatMap((fs) => {
      const item = itemOf(fs[0]!)!;
      return this.standingOn(fs[0]!.env_id, item.kind, item.name);
    });
  }
}

const keyOf = (envId: string, kind: Kind, name: string) => JSON.stringify([envId, itemKey(kind, name)]);
