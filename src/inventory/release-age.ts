import { parseDuration } from '../util/duration.js';
import { orderVersions, versionJump, versionKey, type Bump, type Jump } from '../util/item-version.js';
import type { FirstSeen } from './first-seen.js';
import type { InstalledItem } from './inventory.js';
import { refOf, type ItemRef } from './kinds.js';

/**
 * Letting new versions age: a theme update is taken only once its version has been seen in the
 * listing for `min_release_age` (or its bump's age in `by_bump`). The listing gives no release date,
 * so the age counts from when sitefleet first saw the version (first-seen.ts); the store that keeps
 * those times lives in coord/. Everything here is pure: the time is an input. A type, not an
 * interface: it is part of a task's `with:` block, which is a record.
 */
export type ReleaseAgePolicy = {
  min_release_age?: string;
  by_bump?: Partial<Record<Bump, string>>;
  max_hold?: string;
  release_age_bypass?: 'vulnerable' | 'none';
};

/** A theme that releases faster than its age still gets an update this long after it fell behind. */
export const DEFAULT_MAX_HOLD = '21d';

/**
 * `age_pending` and `superseded` hold an update back; `security_bypass` and `max_hold` send one before
 * its age (reported, not held).
 */
export const RELEASE_AGE_CODES = ['age_pending', 'superseded', 'security_bypass', 'max_hold'] as const;
export type ReleaseAgeCode = (typeof RELEASE_AGE_CODES)[number];

/** What the rule decided for one item on one environment, when it decided more than "old enough"; the item named for its kind. */
export type ReleaseAgeDecision = ItemRef & ReleaseAgeFacts;

interface ReleaseAgeFacts {
  code: ReleaseAgeCode;
  /** True for an update held back; false for one sent before its age. */
  held: boolean;
  installed: string;
  /** The version the listing offers (the one an update installs). */
  version: string;
  first_seen: string;
  /** When the offered version may be sent: its age passed, or max_hold ran out, whichever comes first. */
  eligible_at: string;
  /** `superseded`: an older update that had aged, replaced in the listing by `version` before it was taken. */
  superseded?: { version: string; eligible_at: string };
  /** `max_hold`: since when this install has waited for a newer version. */
  waiting_since?: string;
  /** The setting that changes the outcome. */
  override: string;
}

/** The time to judge at and the first-seen table, both inputs: the planner reads no clock and no store. */
export interface ReleaseClock {
  now: number;
  firstSeen: FirstSeen;
}

export function usesReleaseAge(policy: ReleaseAgePolicy): boolean {
  return policy.min_release_age !== undefined || policy.by_bump !== undefined;
}

/** An update that moves off a vulnerable version to one not flagged: the kind `release_age_bypass: vulnerable` sends at once. */
export function fixesVulnerable(t: Pick<InstalledItem, 'version_vulnerable' | 'update_vulnerable'>): boolean {
  return t.version_vulnerable && !t.update_vulnerable;
}

const ms = (text: string | undefined) => (text === undefined ? 0 : (parseDuration(text) ?? 0));
const iso = (at: number) => new Date(at).toISOString();

/**
 * The age a jump must reach and the field that sets it. `none` (`6.0` → `6.0.0`) waits as a patch;
 * a version we cannot read waits the longest age given, as it must never pass for a small change.
 */
export function ageOf(policy: ReleaseAgePolicy, jump: Jump): Age {
  const bump = jump === 'none' ? 'patch' : jump;
  const base = age('with.min_release_age', policy.min_release_age);
  if (bump === 'unnumbered') {
    const given = Object.entries(policy.by_bump ?? {}).map(([b, text]) => age(`with.by_bump.${b}`, text));
    return [base, ...given].reduce((a, b) => (b.ms > a.ms ? b : a));
  }
  const own = policy.by_bump?.[bump];
  return own === undefined ? base : age(`with.by_bump.${bump}`, own);
}

/** An age and the field that set it, as written there (`0s` when not given). */
export interface Age {
  ms: number;
  field: string;
  text: string;
}

const age = (field: string, text: string | undefined): Age => ({ ms: ms(text), field, text: text ?? '0s' });

/** The longest age the policy asks for: `max_hold` below it would cut every such wait short. */
export function longestAge(policy: ReleaseAgePolicy): Age {
  return ageOf(policy, 'unnumbered');
}

export function maxHoldOf(policy: ReleaseAgePolicy): { ms: number; text: string } {
  const text = policy.max_hold ?? DEFAULT_MAX_HOLD;
  return { ms: ms(text), text };
}

/** When `version` becomes eligible for an install of `installed`: first seen plus its jump's age. */
function ripeAt(policy: ReleaseAgePolicy, clock: ReleaseClock, item: InstalledItem, version: string) {
  const firstSeen = clock.firstSeen.at(item.kind, item.name, version) ?? clock.now;
  const installed = item.version;
  return { firstSeen, eligibleAt: firstSeen + ageOf(policy, versionJump(installed, version)).ms };
}

/**
 * The versions this install fell behind on before the offered one: those seen of its theme, newer
 * than the installed version and older than the offered one. Oldest first. Releases are ordered as
 * `orderVersions` reads them (`1.2.3.1`, `2.0-rc1` too); two it cannot order are ordered by when each
 * was first seen, as a theme's releases appear in the listing one after the other. Without this a
 * theme numbered in a way we cannot read would count only from its newest version, and one that
 * releases faster than `max_hold` would never be freed.
 */
function pendingVersions(t: InstalledItem, table: FirstSeen, now: number): { version: string; at: number }[] {
  const [installed, offered] = [versionKey(t.version), versionKey(t.update_version)];
  const seenAt = (v: string) => table.at(t.kind, t.name, v) ?? now;
  const order = (a: string, b: string) => orderVersions(a, b) ?? seenAt(a) - seenAt(b);
  const between = table.versions(t.kind, t.name).filter(([v]) => v !== installed && v !== offered && order(v, installed) > 0 && order(v, offered) < 0);
  return between.map(([version, at]) => ({ version, at })).sort((a, b) => a.at - b.at);
}

/**
 * Judges one offered update (the caller has checked the listing shows one). Undefined when it is old
 * enough or no age is asked for; else a decision to hold it or to send it early, with dates.
 */
export function judgeReleaseAge(t: InstalledItem, policy: ReleaseAgePolicy, clock: ReleaseClock): ReleaseAgeDecision | undefined {
  if (!usesReleaseAge(policy)) return undefined;
  const offered = ripeAt(policy, clock, t, t.update_version);
  if (offered.eligibleAt <= clock.now) return undefined;
  const ageField = ageOf(policy, versionJump(t.version, t.update_version)).field;
  const base = { ...refOf(t.kind, t.name), installed: t.version, version: t.update_version, first_seen: iso(offered.firstSeen) };
  if (fixesVulnerable(t) && (policy.release_age_bypass ?? 'vulnerable') === 'vulnerable')
    return { ...base, code: 'security_bypass', held: false, eligible_at: iso(offered.eligibleAt), override: 'with.release_age_bypass: none waits anyway' };
  const pending = pendingVersions(t, clock.firstSeen, clock.now);
  const waitingSince = Math.min(offered.firstSeen, ...pending.map((p) => p.at));
  const maxHold = maxHoldOf(policy);
  const releaseAt = waitingSince + maxHold.ms;
  if (releaseAt <= clock.now)
    return {
      ...base,
      code: 'max_hold',
      held: false,
      eligible_at: iso(offered.eligibleAt),
      waiting_since: iso(waitingSince),
      override: `raise with.max_hold (${maxHold.text}) to wait longer`,
    };
  const held = { ...base, held: true, eligible_at: iso(Math.min(offered.eligibleAt, releaseAt)), override: `lower ${ageField} to take it sooner` };
  const aged = pending.find((p) => ripeAt(policy, clock, t, p.version).eligibleAt <= clock.now);
  if (aged === undefined) return { ...held, code: 'age_pending' };
  const agedAt = ripeAt(policy, clock, t, aged.version).eligibleAt;
  return { ...held, code: 'superseded', superseded: { version: aged.version, eligible_at: iso(agedAt) } };
}

/**
 * A decision in words for a reason or note (`astra: age_pending: …`). No `; ` inside: notes list
 * themes with it (see themes-update.ts).
 */
export function describeDecision(d: ReleaseAgeDecision): string {
  const versions = `${d.installed} → ${d.version}`;
  const seen = `first seen ${d.first_seen}`;
  switch (d.code) {
    case 'age_pending':
      return `age_pending: ${versions} ${seen}, eligible ${d.eligible_at} (${d.override})`;
    case 'superseded':
      return `superseded: ${d.superseded!.version} was eligible ${d.superseded!.eligible_at} but ${d.version} replaced it, ${seen}, eligible ${d.eligible_at} (${d.override})`;
    case 'security_bypass':
      return `security_bypass: ${versions} fixes vulnerable ${d.installed}, ${seen}, eligible ${d.eligible_at} (${d.override})`;
    case 'max_hold':
      return `max_hold: ${versions} ${seen}, eligible ${d.eligible_at}, but this install has waited for a newer version since ${d.waiting_since!} (${d.override})`;
  }
}
