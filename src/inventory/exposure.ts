import { versionJump } from '../util/item-version.js';
import { installedOf, type Environment, type InstalledItem, type Inventory } from './inventory.js';
import { KIND_TABLE, KINDS, refOf, type ItemRef, type Kind } from './kinds.js';
import { ageOf, judgeReleaseAge, type ReleaseAgeCode, type ReleaseAgePolicy, type ReleaseClock } from './release-age.js';

/** One environment running an item version the listing flags vulnerable. */
export interface ExposedEnvironment {
  site: string;
  site_id?: string;
  environment: string;
  env_id: string;
  version: string;
  /** The version the listing offers, or null when it offers none. */
  update: string | null;
  update_vulnerable: boolean;
  /** An update is offered and is not itself flagged vulnerable: taking it ends the exposure. */
  safe_update: boolean;
  /** The offered update's age, when the command judged release ages; null when no update is offered. */
  release_age?: UpdateAge | null;
}

/** When an offered update was first seen and whether a policy lets it go now (see release-age.ts). */
export interface UpdateAge {
  first_seen: string;
  /** Sent tonight under the policy: old enough, or sent early (`code`). */
  eligible: boolean;
  /** When its age passes (or max_hold runs out): the date a held update goes. */
  eligible_at: string;
  /** What the release age decided, when more than "old enough". */
  code?: ReleaseAgeCode;
}

/** The clock and the policy to judge offered updates' ages with (`inventory --exposure --min-release-age`). */
export interface ExposureReleases {
  clock: ReleaseClock;
  policy: ReleaseAgePolicy;
}

/** One vulnerable item, named for its kind (`theme`, `plugin`), with the environments that run a vulnerable version of it. */
export type ItemExposure = ItemRef & { environments: ExposedEnvironment[] };

/** The fleet's exposure: per item, the environments whose installed version is vulnerable. */
export interface Exposure {
  /** Installs of a vulnerable version (an environment with two such items counts twice). */
  installs: number;
  /** Environments running at least one vulnerable version. */
  environments: number;
  /** Environments running a vulnerable version that has a safe update: what `--fail-on vulnerable` fails on. */
  fixable_environments: number;
  /** Themes first, then plugins, each by name (kinds.ts's order). */
  items: ItemExposure[];
  /** Kinds that could not be read, and why: their exposure is unknown, never none (`--fail-on` fails on it). */
  unchecked?: { kind: Kind; why: string }[];
}

/** Pure: the listings' flags folded per item (by kind, then name), environments in inventory order; with `releases`, each update's age. */
export function exposureOf(inventory: Inventory, releases?: ExposureReleases): Exposure {
  const exposed = new Set<string>();
  const fixable = new Set<string>();
  const items: ItemExposure[] = [];
  for (const kind of KINDS) {
    const byName = new Map<string, ExposedEnvironment[]>();
    for (const env of inventory.environments) {
      for (const t of installedOf(env, kind)) {
        if (!isExposed(t)) continue;
        const row = { ...exposedRow(env, t), ...(releases ? { release_age: t.update_available ? updateAge(t, releases) : null } : {}) };
        exposed.add(env.id);
        if (row.safe_update) fixable.add(env.id);
        byName.set(t.name, [...(byName.get(t.name) ?? []), row]);
      }
    }
    const names = [...byName].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    items.push(...names.map(([name, environments]) => ({ ...refOf(kind, name), environments })));
  }
  const unchecked = KINDS.flatMap((kind) => {
    const why = inventory.listed[kind]?.unavailable;
    return why ? [{ kind, why }] : [];
  });
  return {
    installs: items.reduce((n, t) => n + t.environments.length, 0),
    environments: exposed.size,
    fixable_environments: fixable.size,
    items,
    ...(unchecked.length > 0 ? { unchecked } : {}),
  };
}

/**
 * An install the fleet should not run: a version the listing flags vulnerable, or where the service
 * flags none (WordPress), one behind the newest the fleet runs by more than a minor release, in
 * WordPress's words: another x.y release (6.7.1 with 6.8 out; 6.7.1 with 6.7.2 out is a minor one,
 * which this tool's jumps call a patch).
 */
function isExposed(t: InstalledItem): boolean {
  if (KIND_TABLE[t.kind].exposed === 'vulnerable') return t.version_vulnerable;
  const jump = t.update_available ? versionJump(t.version, t.update_version) : 'none';
  return jump === 'minor' || jump === 'major';
}

function exposedRow(env: Environment, t: InstalledItem): ExposedEnvironment {
  const update = t.update_available && t.update_version !== '' ? t.update_version : null;
  return {
    site: env.site,
    ...(env.site_id === undefined ? {} : { site_id: env.site_id }),
    environment: env.name,
    env_id: env.id,
    version: t.version,
    update,
    update_vulnerable: update !== null && t.update_vulnerable,
    safe_update: update !== null && !t.update_vulnerable,
  };
}

function updateAge(t: InstalledItem, { clock, policy }: ExposureReleases): UpdateAge {
  const firstSeen = clock.firstSeen.at(t.kind, t.name, t.update_version) ?? clock.now;
  const decision = judgeReleaseAge(t, policy, clock);
  if (decision) return { first_seen: decision.first_seen, eligible: !decision.held, eligible_at: decision.eligible_at, code: decision.code };
  const agedAt = firstSeen + ageOf(policy, versionJump(t.version, t.update_version)).ms;
  return { first_seen: new Date(firstSeen).toISOString(), eligible: true, eligible_at: new Date(agedAt).toISOString() };
}
