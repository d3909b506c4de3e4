import { versionKey } from '../util/item-version.js';
import { itemKey, itemOf, refOf, type ItemRef, type Kind } from './kinds.js';
import { unreadNames, type UnreadLine } from './unread-line.js';

/**
 * Item versions that broke a site (issue 48, "Quarantine"): sent nowhere again, on any site under any
 * playbook of the company, until a person releases them or a newer version supersedes them (a newer
 * version is offered as usual, since only this very version is held). The stores (coord/) write and read these entries, the planner
 * (actions/items-update.ts) judges by the table, and the executor asks it within a run: one schema
 * here, below all three.
 */

/** A break: an item version broke the site of `env_id` at `at`, for `why` (the logged error line, or the failed check). */
export type QuarantineBreak = ItemRef & {
  version: string;
  env_id: string;
  /** Display names of where it broke, as the listing gave them: for people, never identity. */
  site?: string;
  environment?: string;
  at: number;
  why: string;
};

/**
 * A release: every break of that item version recorded before `at` is folded away. A person's
 * (`sitefleet quarantine release`), or a plan's once the fleet moved past the version
 * (`superseded_by`: a newer version the listings show, while none offers this one; inventory/withheld-prune.ts).
 */
export type QuarantineRelease = ItemRef & { version: string; released: true; at: number; superseded_by?: string };

export type QuarantineEntry = QuarantineBreak | QuarantineRelease;

/** One quarantined item version: its first break since the last release, and every environment it broke since. */
export interface Quarantined {
  kind: Kind;
  name: string;
  version: string;
  first: QuarantineBreak;
  /** The environments it broke (by id), the first's first. */
  env_ids: string[];
}

export const isRelease = (e: QuarantineEntry): e is QuarantineRelease => 'released' in e;

/**
 * The entries folded, whatever the order of their lines: a version is quarantined while a break of it
 * is later than its latest release. A break is dated when it happened (its run's journal), never when
 * it was recorded, so a run's end recorded again (a resume, `status`) after a release stays folded
 * away. What the store's compaction keeps (`kept`) is what still stands and the latest release of
 * each version: a released version's breaks leave the store, its release stays, so that no later
 * reader brings them back.
 */
export class QuarantineTable {
  readonly #breaks = new Map<string, QuarantineBreak[]>();
  readonly #released = new Map<string, QuarantineRelease>();
  /** The store's lines this release could not read: each holds what it names (unread-line.ts). */
  readonly unread: UnreadLine[] = [];

  static of(entries: readonly QuarantineEntry[]): QuarantineTable {
    const table = new QuarantineTable();
    table.add(entries);
    return table;
  }

  /**
   * Adds entries, in place: what a run learns (a version that broke a site tonight) holds for the rest
   * of it before the store has it (the executor's "later in the same run").
   */
  add(entries: readonly QuarantineEntry[]): this {
    for (const e of entries) {
      const item = itemOf(e);
      if (!item) continue;
      const key = keyOf(item.kind, item.name, e.version);
      if (isRelease(e)) {
        const known = this.#released.get(key);
        if (known === undefined || e.at > known.at) this.#released.set(key, e);
      } else {
        const known = this.#breaks.get(key);
        if (known) known.push(e);
        else this.#breaks.set(key, [e]);
      }
    }
    return this;
  }

  /** A line the store could not read, held as what it names (none: it names nothing, and so holds every update). */
  hold(line: UnreadLine): this {
    this.unread.push(line);
    return this;
  }

  has(kind: Kind, name: string, version: string): boolean {
    return this.get(kind, name, version) !== undefined;
  }

  /** The line the store could not read that holds `version` of the item, if one does: one naming it, or one naming nothing. */
  unreadFor(kind: Kind, name: string, version: string): UnreadLine | undefined {
    return this.unread.find((l) => l.item === undefined || unreadNames(l, kind, name, version));
  }

  /** When `version` of the item was last released; -Infinity when never. */
  releasedAt(kind: Kind, name: string, version: string): number {
    return this.#released.get(keyOf(kind, name, version))?.at ?? -Infinity;
  }

  /** What holds `version` of the item, or undefined when nothing does. */
  get(kind: Kind, name: string, version: string): Quarantined | undefined {
    const key = keyOf(kind, name, version);
    const since = this.#released.get(key)?.at ?? -Infinity;
    const breaks = (this.#breaks.get(key) ?? []).filter((b) => b.at > since).sort((a, b) => a.at - b.at);
    if (breaks.length === 0) return undefined;
    return { kind, name, version: breaks[0]!.version, first: breaks[0]!, env_ids: [...new Set(breaks.map((b) => b.env_id))] };
  }

  /** Every quarantined version, by kind, name and version. */
  list(): Quarantined[] {
    const found = [...this.#breaks.entries()].flatMap(([key, breaks]) => {
      const item = itemOf(breaks[0]!)!;
      const q = this.get(item.kind, item.name, breaks[0]!.version);
      return q ? [{ key, q }] : [];
    });
    return found.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0)).map((f) => f.q);
  }

  /** The kinds in which `name@version` is quarantined (a release names one; a name held in two must say which). */
  kindsOf(name: string, version: string): Kind[] {
    return this.list()
      .filter((q) => q.name === name && versionKey(q.version) === versionKey(version))
      .map((q) => q.kind);
  }

  /** The breaks that still count (one per environment and version, the earliest). */
  standing(): QuarantineBreak[] {
    return this.list().flatMap((q) => {
      const since = this.releasedAt(q.kind, q.name, q.version);
      const earliest = new Map<string, QuarantineBreak>();
      for (const b of this.#breaks.get(keyOf(q.kind, q.name, q.version)) ?? []) {
        const known = earliest.get(b.env_id);
        if (b.at > since && (known === undefined || b.at < known.at)) earliest.set(b.env_id, b);
      }
      return [...earliest.values()].sort((a, b) => a.at - b.at);
    });
  }

  /** What a compaction keeps: the breaks that stand, and the latest release of each version (an event no later reader undoes). */
  kept(): QuarantineEntry[] {
    const releases = [...this.#released.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([, r]) => r);
    return [...this.standing(), ...releases];
  }
}

/** A release of one item version at `at`. */
export function releaseOf(kind: Kind, name: string, version: string, at: number): QuarantineRelease {
  return { ...refOf(kind, name), version, released: true, at };
}

/** `6.0` and `6.0.0` are one version (util/item-version.ts), as the first-seen table keys them. */
const keyOf = (kind: Kind, name: string, version: string) => JSON.stringify([itemKey(kind, name), versionKey(version)]);
