import { itemKey, itemOf, type ItemRef, type Kind } from './kinds.js';

/**
 * What staging environments ran of each item version, as the staging store holds it: one entry a
 * line, folded into a table. Here, below both, so that the stores (coord/) that write and read it and
 * the planner (plan/staging-first.ts) that judges by it share one schema and neither imports the other.
 */

/** One line of the store, written as a staging step ended: it took `version` and passed its checks (`healthy`), or did not (`failed`). */
export type StagingEntry = ItemRef & {
  env_id: string;
  version: string;
  kind: 'healthy' | 'failed';
  at: number;
  why?: string;
};

/** What the store says of one (staging environment, item, version): the earliest of each kind. */
export interface StagingRecord {
  healthy?: number;
  failed?: { at: number; why: string };
}

/** The store's entries folded: of two times of a kind the earlier stands, so a soak never restarts and a failure never ages out. */
export class StagingTable {
  readonly #records = new Map<string, StagingRecord>();

  static of(entries: readonly StagingEntry[]): StagingTable {
    const table = new StagingTable();
    for (const e of entries) table.#add(e);
    return table;
  }

  get(envId: string, item: { kind: Kind; name: string }, version: string): StagingRecord | undefined {
    return this.#records.get(keyOf(envId, item, version));
  }

  #add(e: StagingEntry): void {
    const item = itemOf(e);
    if (!item) return;
    const key = keyOf(e.env_id, item, e.version);
    const record = this.#records.get(key) ?? {};
    if (e.kind === 'healthy' && (record.healthy === undefined || e.at < record.healthy)) record.healthy = e.at;
    if (e.kind === 'failed' && (record.failed === undefined || e.at < record.failed.at))
      record.failed = { at: e.at, why: e.why ?? 'its staging update failed' };
    this.#records.set(key, record);
  }
}

const keyOf = (envId: string, item: { kind: Kind; name: string }, version: string) => JSON.stringify([envId, itemKey(item.kind, item.name), version]);
