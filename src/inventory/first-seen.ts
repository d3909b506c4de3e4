import { versionKey } from '../util/item-version.js';
import { installedOf, type Inventory } from './inventory.js';
import { itemKey, itemOf, KINDS, refOf, type ItemRef, type Kind } from './kinds.js';

/** One item version a listing showed, installed somewhere or offered as an update; the item named for its kind (`{ theme }`, `{ plugin }`). */
export type Sighting = ItemRef & { version: string };

/** A sighting with when it was first made, in ms since the epoch. */
export type FirstSighting = Sighting & { at: number };

/**
 * When sitefleet first saw each item version in a company's listings. The listings give no release
 * dates, so this is the only age a version has: the clock of `min_release_age` (see release-age.ts).
 * Keyed by kind, name and version: a plugin and a theme of one slug age apart. Built by the store
 * (coord/), read by the pure planner. Keys are Maps, never object fields: names come from the service
 * and may be anything, `__proto__` included. A version is kept under its key (`versionKey`: `6.0` and
 * `6.0.0` are one release), so a store's old and new spellings fold.
 */
export class FirstSeen {
  readonly #byItem = new Map<string, { kind: Kind; name: string; versions: Map<string, number> }>();

  /** Folds sightings in; of two times for one version the earlier wins (a first-seen time never moves later). */
  static of(sightings: Iterable<FirstSighting>): FirstSeen {
    const table = new FirstSeen();
    for (const s of sightings) table.#add(s);
    return table;
  }

  #add(s: FirstSighting): void {
    const item = itemOf(s);
    if (!item || !Number.isFinite(s.at)) return;
    const key = itemKey(item.kind, item.name);
    const entry = this.#byItem.get(key) ?? { ...item, versions: new Map<string, number>() };
    const version = versionKey(s.version);
    const known = entry.versions.get(version);
    if (known === undefined || s.at < known) entry.versions.set(version, s.at);
    this.#byItem.set(key, entry);
  }

  /** When `version` of the item was first seen; undefined when it never was. */
  at(kind: Kind, name: string, version: string): number | undefined {
    return this.#byItem.get(itemKey(kind, name))?.versions.get(versionKey(version));
  }

  /** Every version of the item seen (by its key), with when. */
  versions(kind: Kind, name: string): [version: string, at: number][] {
    return [...(this.#byItem.get(itemKey(kind, name))?.versions ?? [])];
  }

  /** Every sighting (versions by their key), for a store to write. */
  *entries(): Generator<FirstSighting> {
    for (const { kind, name, versions } of this.#byItem.values()) for (const [version, at] of versions) yield { ...refOf(kind, name), version, at };
  }
}

/**
 * Every distinct item version the listings show: the versions installed and the updates offered.
 * An installed version counts as seen too: it was public at least since it showed up on a site.
 */
export function sightingsOf(inventory: Inventory): Sighting[] {
  const seen = new Map<string, Sighting>();
  const add = (kind: Kind, name: string, version: string) => {
    if (version !== '') seen.set(JSON.stringify([kind, name, versionKey(version)]), { ...refOf(kind, name), version: versionKey(version) });
  };
  for (const env of inventory.environments)
    for (const kind of KINDS)
      for (const t of installedOf(env, kind)) {
        add(kind, t.name, t.version);
        if (t.update_available) add(kind, t.name, t.update_version);
      }
  return [...seen.values()];
}
