import { versionKey } from '../util/theme-version.js';
import type { Inventory } from './inventory.js';

/** One theme version the listing showed, installed somewhere or offered as an update. */
export interface Sighting {
  theme: string;
  version: string;
}

/** A sighting with when it was first made, in ms since the epoch. */
export interface FirstSighting extends Sighting {
  at: number;
}

/**
 * When sitefleet first saw each theme version in a company's listing. The listing gives no release
 * dates, so this is the only age a version has: the clock of `min_release_age` (see release-age.ts).
 * Built by the store (coord/), read by the pure planner. Keys are Maps, never object fields: theme
 * names come from the service and may be anything, `__proto__` included. A version is kept under its
 * key (`versionKey`: `6.0` and `6.0.0` are one release), so a store's old and new spellings fold.
 */
export class FirstSeen {
  readonly #byTheme = new Map<string, Map<string, number>>();

  /** Folds sightings in; of two times for one version the earlier wins (a first-seen time never moves later). */
  static of(sightings: Iterable<FirstSighting>): FirstSeen {
    const table = new FirstSeen();
    for (const s of sightings) table.#add(s);
    return table;
  }

  #add({ theme, version, at }: FirstSighting): void {
    if (!Number.isFinite(at)) return;
    const versions = this.#byTheme.get(theme) ?? new Map<string, number>();
    const key = versionKey(version);
    const known = versions.get(key);
    if (known === undefined || at < known) versions.set(key, at);
    this.#byTheme.set(theme, versions);
  }

  /** When `version` of `theme` was first seen; undefined when it never was. */
  at(theme: string, version: string): number | undefined {
    return this.#byTheme.get(theme)?.get(versionKey(version));
  }

  /** Every version of `theme` seen (by its key), with when. */
  versions(theme: string): [version: string, at: number][] {
    return [...(this.#byTheme.get(theme) ?? [])];
  }

  /** Every sighting (versions by their key), for a store to write. */
  *entries(): Generator<FirstSighting> {
    for (const [theme, versions] of this.#byTheme) for (const [version, at] of versions) yield { theme, version, at };
  }
}

/**
 * Every distinct theme version the listing shows: the versions installed and the updates offered.
 * An installed version counts as seen too: it was public at least since it showed up on a site.
 */
export function sightingsOf(inventory: Inventory): Sighting[] {
  const seen = new Map<string, Sighting>();
  const add = (theme: string, version: string) => {
    if (version !== '') seen.set(JSON.stringify([theme, versionKey(version)]), { theme, version: versionKey(version) });
  };
  for (const env of inventory.environments)
    for (const t of env.themes) {
      add(t.name, t.version);
      if (t.update_available) add(t.name, t.update_version);
    }
  return [...seen.values()];
}
