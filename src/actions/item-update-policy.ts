import type { InputProblem } from '../errors.js';
import type { InstalledItem } from '../inventory/inventory.js';
import type { KindRow } from '../inventory/kinds.js';
import {
  DEFAULT_MAX_HOLD,
  describeDecision,
  judgeReleaseAge,
  longestAge,
  maxHoldOf,
  usesReleaseAge,
  type ReleaseAgeDecision,
  type ReleaseAgePolicy,
  type ReleaseClock,
} from '../inventory/release-age.js';
import { judgeWithheld, withheldWords, type WithheldDecision, type Withholding } from '../inventory/withheld.js';
import { ageSchema, LONGEST_AGE } from '../util/duration.js';
import { BUMPS, versionJump, withinBump, type Bump } from '../util/item-version.js';

/** The `with:` block of an item update (`themes.update`, `plugins.update`): which items, by the kind's plural, and the policy. */
export type ItemsUpdateWith = ReleaseAgePolicy & {
  themes?: string | string[];
  plugins?: string | string[];
  /** Slugs (globs) never updated by this task, whatever the item globs select. */
  exclude?: string | string[];
  /** WordPress: the versions a task may install (item-writes.ts). */
  versions?: string[];
  skip_vulnerable_updates?: boolean;
  only_vulnerable?: boolean;
  max_bump?: Bump;
};

const releaseAge = (what: string) => ageSchema(LONGEST_AGE.releaseAge, what);

/** The `with:` fields of an item update besides which items: the update policy that judges each. */
export const POLICY_FIELDS = {
  skip_vulnerable_updates: { type: 'boolean', default: true, description: 'leave alone updates whose version is flagged vulnerable' },
  only_vulnerable: { type: 'boolean', default: false, description: 'update only items whose installed version is flagged vulnerable' },
  max_bump: {
    enum: [...BUMPS],
    default: 'major',
    description: 'the largest version jump to take (4.1.0 → 4.2.0 is minor); a version not numbered as 1.2 or 1.2.3 passes only major',
  },
  min_release_age: releaseAge('take a version only once sitefleet has seen it in the listing this long (3d)'),
  by_bump: {
    type: 'object',
    additionalProperties: false,
    minProperties: 1,
    properties: Object.fromEntries(BUMPS.map((b) => [b, releaseAge(`the age a ${b} update must reach, instead of min_release_age`)])),
    description: 'an age per version jump, e.g. { patch: 1d, major: 14d }; a jump not named waits min_release_age',
  },
  max_hold: ageSchema(
    LONGEST_AGE.maxHold,
    `an install behind on an item for this long gets its update whatever its age, counted from the first-seen time of the oldest newer version it has not taken (default ${DEFAULT_MAX_HOLD})`,
  ),
  release_age_bypass: {
    enum: ['vulnerable', 'none'],
    default: 'vulnerable',
    description: 'vulnerable: an update that fixes a vulnerable installed version goes at once; none: it waits its age too',
  },
};

/**
 * The policy fields of a kind's update. A kind whose listing flags no vulnerable version (WordPress:
 * the site listing gives its version alone) takes no vulnerability rule: one would pass for a check
 * while it could not look.
 */
export function policyFields(row: KindRow): Record<string, unknown> {
  if (row.exposed === 'vulnerable') return POLICY_FIELDS;
  const { skip_vulnerable_updates: _skip, only_vulnerable: _only, ...rest } = POLICY_FIELDS;
  const { release_age_bypass: _bypass, ...aged } = rest;
  return aged;
}

/** Cross-field rules of the release age, which the schema cannot say. Paths are relative to `with`. */
export function checkPolicy(w: ItemsUpdateWith): InputProblem[] {
  if (!usesReleaseAge(w))
    return (['max_hold', 'release_age_bypass'] as const)
      .filter((field) => w[field] !== undefined)
      .map((field) => ({ path: field, message: 'goes with min_release_age or by_bump: without an age nothing is held back' }));
  const longest = longestAge(w);
  const hold = maxHoldOf(w);
  if (hold.ms >= longest.ms) return [];
  const field = longest.field.replace(/^with\./, '');
  return [
    {
      path: w.max_hold === undefined ? field : 'max_hold',
      message: `${field} (${longest.text}) is longer than max_hold (${hold.text}${w.max_hold === undefined ? ', the default' : ''}): such updates would go at max_hold, before their age; set max_hold to at least ${longest.text}`,
    },
  ];
}

/** What the policy makes of one offered update: sent (perhaps early, with why), or held back with why. */
export type Judgement =
  { send: true; early?: ReleaseAgeDecision } | { send: false; reason: string; decision?: ReleaseAgeDecision; withheld?: WithheldDecision };

/**
 * The rules in order, the most basic first: a night that updates only vulnerable installs says so
 * before it weighs the update itself, then what the company's history withholds (inventory/withheld.ts),
 * and the release age comes last. `releases` is undefined only
 * where no age can be judged (validate's stand-in expansion, which checks bodies alone).
 */
export function judgeUpdate(
  t: InstalledItem,
  policy: ItemsUpdateWith,
  releases: ReleaseClock | undefined,
  /** The environment and the company's history (quarantine, retries): undefined where none is judged. */
  history?: { env: { id: string }; withholding: Withholding | undefined },
): Judgement {
  const reason = heldBack(t, policy);
  if (reason !== undefined) return { send: false, reason };
  // The policy would have sent it: the company's history may still leave it alone (a quarantined version, a backoff).
  const withheld = history && judgeWithheld(history.env, t, history.withholding);
  if (withheld) return { send: false, reason: withheldWords(withheld), withheld };
  const decision = releases && judgeReleaseAge(t, policy, releases);
  if (decision === undefined) return { send: true };
  return decision.held ? { send: false, reason: describeDecision(decision), decision } : { send: true, early: decision };
}

/** Why the version rules leave this update alone, in words that name the versions judged; undefined when it may go. */
function heldBack(t: InstalledItem, policy: ItemsUpdateWith): string | undefined {
  if (policy.only_vulnerable === true && !t.version_vulnerable) return `installed version ${t.version} not vulnerable`;
  if ((policy.skip_vulnerable_updates ?? true) && t.update_vulnerable) return `update ${t.version} → ${t.update_version} flagged vulnerable`;
  const max = policy.max_bump ?? 'major';
  const jump = versionJump(t.version, t.update_version);
  if (withinBump(jump, max)) return undefined;
  const versions = `${t.version} → ${t.update_version}`;
  return jump === 'unnumbered'
    ? `update ${versions} not numbered as 1.2 or 1.2.3, beyond max_bump: ${max}`
    : `${jump} update ${versions} beyond max_bump: ${max}`;
}
