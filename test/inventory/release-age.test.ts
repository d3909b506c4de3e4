import { describe, expect, it } from 'vitest';
import { FirstSeen } from '../../src/inventory/first-seen.js';
import type { InstalledItem } from '../../src/inventory/inventory.js';
import { ageOf, judgeReleaseAge, type ReleaseAgePolicy } from '../../src/inventory/release-age.js';

const T0 = Date.parse('2026-03-02T02:00:00.000Z');
const DAY = 86_400_000;
const iso = (at: number) => new Date(at).toISOString();

function theme(version: string, update: string, o: Partial<InstalledItem> = {}): InstalledItem {
  return {
    kind: 'theme',
    name: 'astra',
    status: 'active',
    version,
    version_vulnerable: false,
    update_available: true,
    update_version: update,
    update_vulnerable: false,
    update_status: '',
    auto_update_type: '',
    ...o,
  };
}

/** A table of `version → days after T0 it was first seen`, all of theme astra. */
const seen = (days: Record<string, number>) => FirstSeen.of(Object.entries(days).map(([version, d]) => ({ theme: 'astra', version, at: T0 + d * DAY })));
const judge = (t: InstalledItem, policy: ReleaseAgePolicy, days: Record<string, number>, nowDays: number) =>
  judgeReleaseAge(t, policy, { now: T0 + nowDays * DAY, firstSeen: seen(days) });

describe('release age', () => {
  it('takes each jump its own age: by_bump where given, else min_release_age; a same release waits as a patch, an unreadable one the longest', () => {
    const policy: ReleaseAgePolicy = { min_release_age: '3d', by_bump: { patch: '1d', major: '14d' } };
    expect(ageOf(policy, 'patch')).toMatchObject({ ms: DAY, field: 'with.by_bump.patch' });
    expect(ageOf(policy, 'none')).toMatchObject({ ms: DAY, field: 'with.by_bump.patch' });
    expect(ageOf(policy, 'minor')).toMatchObject({ ms: 3 * DAY, field: 'with.min_release_age' });
    expect(ageOf(policy, 'major')).toMatchObject({ ms: 14 * DAY, field: 'with.by_bump.major' });
    expect(ageOf(policy, 'unnumbered')).toMatchObject({ ms: 14 * DAY, field: 'with.by_bump.major' });
    expect(ageOf({ by_bump: { minor: '2d' } }, 'patch')).toEqual({ ms: 0, field: 'with.min_release_age', text: '0s' });
  });

  it('holds an update until first seen plus its age, then says nothing; no age asked: never judged', () => {
    const policy = { min_release_age: '3d' };
    expect(judge(theme('4.1.0', '4.1.1'), policy, { '4.1.1': 1 }, 3.9)).toMatchObject({
      code: 'age_pending',
      held: true,
      first_seen: iso(T0 + DAY),
      eligible_at: iso(T0 + 4 * DAY),
      override: 'lower with.min_release_age to take it sooner',
    });
    expect(judge(theme('4.1.0', '4.1.1'), policy, { '4.1.1': 1 }, 4)).toBeUndefined();
    expect(judge(theme('4.1.0', '4.1.1'), {}, { '4.1.1': 1 }, 1)).toBeUndefined();
    // A version the table does not hold yet is seen now: the whole age is still ahead.
    expect(judge(theme('4.1.0', '4.1.1'), policy, {}, 10)).toMatchObject({ first_seen: iso(T0 + 10 * DAY), eligible_at: iso(T0 + 13 * DAY) });
  });

  it('sends a fix of a vulnerable version at once (release_age_bypass: vulnerable, the default), not a move to a flagged one, and none when asked to wait', () => {
    const fix = theme('2.0', '2.0.1', { version_vulnerable: true });
    expect(judge(fix, { min_release_age: '3d' }, { '2.0.1': 0 }, 0)).toMatchObject({ code: 'security_bypass', held: false });
    expect(judge(fix, { min_release_age: '3d', release_age_bypass: 'none' }, { '2.0.1': 0 }, 0)).toMatchObject({ code: 'age_pending', held: true });
    const toFlagged = theme('2.0', '2.0.1', { version_vulnerable: true, update_vulnerable: true });
    expect(judge(toFlagged, { min_release_age: '3d' }, { '2.0.1': 0 }, 0)).toMatchObject({ code: 'age_pending' });
  });

  it('calls a held update superseded when an older one it replaced had aged, and age_pending when none had', () => {
    const policy = { min_release_age: '3d' };
    expect(judge(theme('1.0.0', '1.0.2'), policy, { '1.0.1': 0, '1.0.2': 2 }, 2.5)).toMatchObject({ code: 'age_pending' });
    expect(judge(theme('1.0.0', '1.0.2'), policy, { '1.0.1': 0, '1.0.2': 2 }, 4)).toMatchObject({
      code: 'superseded',
      superseded: { version: '1.0.1', eligible_at: iso(T0 + 3 * DAY) },
      eligible_at: iso(T0 + 5 * DAY),
    });
  });

  it('max_hold counts per install, from the oldest newer version it has not taken, and is the eligible date when it comes first', () => {
    const policy = { min_release_age: '3d', max_hold: '5d' };
    const table = { '1.0.0': -10, '1.0.1': 0, '1.0.2': 2, '1.0.3': 4.5 };
    // Behind since 1.0.1 (day 0): released on day 5, though 1.0.3 ages only on day 7.5.
    expect(judge(theme('1.0.0', '1.0.3'), policy, table, 4.9)).toMatchObject({ code: 'superseded', eligible_at: iso(T0 + 5 * DAY) });
    expect(judge(theme('1.0.0', '1.0.3'), policy, table, 5)).toMatchObject({ code: 'max_hold', held: false, waiting_since: iso(T0) });
    // An install already on 1.0.1 has waited only since 1.0.2 (day 2): held until day 7.
    expect(judge(theme('1.0.1', '1.0.3'), policy, table, 5)).toMatchObject({ held: true, eligible_at: iso(T0 + 7 * DAY) });
    // A pre-release comes before its release: an install of 1.0-beta has waited since 1.0.0 (day -10).
    expect(judge(theme('1.0-beta', '1.0.3'), policy, table, 7)).toMatchObject({ code: 'max_hold', waiting_since: iso(T0 - 10 * DAY) });
  });

  it('max_hold frees a theme numbered in four parts or with pre-release tags that releases faster than its age', () => {
    const policy = { min_release_age: '3d', max_hold: '5d' };
    // A new 1.2.3.x every two days: each is younger than 3d when the next replaces it.
    const fourParts = { '1.2.3.1': -1, '1.2.3.2': 0, '1.2.3.3': 2, '1.2.3.4': 4, '1.2.3.5': 6 };
    expect(judge(theme('1.2.3.1', '1.2.3.5'), policy, fourParts, 4.9)).toMatchObject({ held: true, eligible_at: iso(T0 + 5 * DAY) });
    expect(judge(theme('1.2.3.1', '1.2.3.5'), policy, fourParts, 6)).toMatchObject({ code: 'max_hold', held: false, waiting_since: iso(T0) });
    // Release candidates, then the release; a beta older than the installed rc1 is no newer version.
    const tagged = { '2.0-beta': -5, '2.0-rc1': -1, '2.0-rc2': 0, '2.0-rc3': 2, '2.0': 4 };
    expect(judge(theme('2.0-rc1', '2.0'), policy, tagged, 5)).toMatchObject({ code: 'max_hold', waiting_since: iso(T0) });
    expect(judge(theme('2.0-rc2', '2.0'), policy, tagged, 5)).toMatchObject({ held: true, eligible_at: iso(T0 + 7 * DAY) });
  });

  it('max_hold orders versions it cannot read at all by when each was first seen', () => {
    const policy = { min_release_age: '3d', max_hold: '5d' };
    const table = { 'nightly-old': -30, trunk: -20, 'nightly-a': 0, 'nightly-b': 2, 'nightly-c': 4 };
    expect(judge(theme('trunk', 'nightly-c'), policy, table, 5)).toMatchObject({ code: 'max_hold', waiting_since: iso(T0) });
    expect(judge(theme('trunk', 'nightly-c'), policy, table, 4.9)).toMatchObject({ held: true, eligible_at: iso(T0 + 5 * DAY) });
  });

  it('6.0 and 6.0.0 are one version: a store line of either spelling starts the same clock', () => {
    const policy = { min_release_age: '3d', max_hold: '5d' };
    // A line written as 6.0 by the previous release (day 0), and 6.0.0 as the listing spells it now (day 2).
    const table = { '6.0': 0, '6.0.0': 2 };
    expect(seen(table).versions('theme', 'astra')).toEqual([['6.0.0', T0]]);
    expect(judge(theme('5.9', '6.0.0'), policy, table, 2.5)).toMatchObject({ code: 'age_pending', first_seen: iso(T0), eligible_at: iso(T0 + 3 * DAY) });
    expect(judge(theme('5.9', '6.0.0'), policy, table, 3)).toBeUndefined();
  });

  it('a first-seen time never moves later: of two sightings of a version, the earlier stays', () => {
    const table = FirstSeen.of([
      { theme: 'astra', version: '1.0', at: T0 + DAY },
      { theme: 'astra', version: '1.0', at: T0 },
      { theme: 'astra', version: '1.0', at: T0 + 2 * DAY },
      { theme: '__proto__', version: 'constructor', at: T0 },
    ]);
    expect(table.at('theme', 'astra', '1.0')).toBe(T0);
    expect(table.at('theme', '__proto__', 'constructor')).toBe(T0);
    expect(table.at('theme', 'toString', '1.0')).toBeUndefined();
  });
});
