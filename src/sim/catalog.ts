import type { Random } from './random.js';

/** An item of a kind's catalogue (a theme, a plugin): its versions, oldest first, and those known vulnerable. */
export interface CatalogItem {
  name: string;
  title: string;
  /** The theme listing shows one; the plugin listing's sample does not. */
  description?: string;
  versions: string[];
  vulnerable: Set<string>;
}

/** How a kind's catalogue is drawn: its names, and the spread of its versions and vulnerabilities. */
export interface CatalogShape {
  named(i: number): { name: string; title: string; description?: string };
  majors: [min: number, max: number];
  versionCount: [min: number, max: number];
  /** Patch numbers are drawn from 0 to this. */
  patches: number;
  /** The chance each older version is vulnerable, and the latest one. */
  olderVulnerable: number;
  latestVulnerable: number;
}

/**
 * A kind's catalogue of `count` items. The draws are made in one order whatever the kind (major,
 * version count, patches, then vulnerabilities), so the theme catalogue of a seed is what it was
 * before the shape was a parameter.
 */
export function makeCatalog(rng: Random, count: number, shape: CatalogShape): Map<string, CatalogItem> {
  const catalog = new Map<string, CatalogItem>();
  for (let i = 0; i < count; i++) {
    const named = shape.named(i);
    const major = rng.int(...shape.majors);
    const versions = Array.from({ length: rng.int(...shape.versionCount) }, (_, minor) => `${major}.${minor}.${rng.int(0, shape.patches)}`);
    const vulnerable = new Set<string>();
    for (const v of versions.slice(0, -1)) if (rng.chance(shape.olderVulnerable)) vulnerable.add(v);
    // Some latest versions are vulnerable too: updating to them is what skip_vulnerable_updates avoids.
    if (rng.chance(shape.latestVulnerable)) vulnerable.add(versions.at(-1)!);
    catalog.set(named.name, { ...named, versions, vulnerable });
  }
  return catalog;
}
