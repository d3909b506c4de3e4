/**
 * How far an update of an item (a theme, a plugin) moves, as WordPress themes and plugins number their releases: two or three numeric
 * parts (`6.0`, `4.1.2`), a missing part read as 0 (`6.0` is `6.0.0`). Anything else (`1.0-beta`,
 * `v2`, four parts) is not judged: its jump is `unnumbered`, which no bound short of `major` allows,
 * because a version we cannot read must never pass for a small change.
 */

/** The size of a jump, smallest first; `none` when both name the same release (`6.0` → `6.0.0`). */
export const JUMPS = ['none', 'patch', 'minor', 'major', 'unnumbered'] as const;
export type Jump = (typeof JUMPS)[number];

/** The bounds a playbook may set (`max_bump`): each allows the jumps up to itself. */
export const BUMPS = ['patch', 'minor', 'major'] as const;
export type Bump = (typeof BUMPS)[number];

const NUMBERED = /^(\d+)\.(\d+)(?:\.(\d+))?$/;

/** [major, minor, patch] of a numbered version; undefined for one that is not. */
export function versionParts(version: string): [number, number, number] | undefined {
  const m = NUMBERED.exec(version.trim());
  return m ? [Number(m[1]), Number(m[2]), Number(m[3] ?? 0)] : undefined;
}

/** The jump from `from` to `to`: the most significant part that differs (a downgrade jumps as far as an upgrade). */
export function versionJump(from: string, to: string): Jump {
  const a = versionParts(from);
  const b = versionParts(to);
  if (!a || !b) return 'unnumbered';
  if (a[0] !== b[0]) return 'major';
  if (a[1] !== b[1]) return 'minor';
  return a[2] !== b[2] ? 'patch' : 'none';
}

/** Whether `max` allows `jump`. */
export function withinBump(jump: Jump, max: Bump): boolean {
  return JUMPS.indexOf(jump) <= JUMPS.indexOf(max) || (max === 'major' && jump === 'unnumbered');
}

/**
 * The one spelling of a version a store keys by: a numbered version as its three parts (`6.0` and
 * `6.0.0` are one release, so one key), anything else exactly as written. Stores written before keys
 * were normalised still read: their `6.0` folds into the same key as a new `6.0.0`.
 */
export function versionKey(version: string): string {
  const parts = versionParts(version);
  return parts ? parts.join('.') : version;
}

/**
 * A looser reading than `versionParts`, for ordering releases only (never for sizing a jump): any
 * number of numeric parts (`1.2.3.1`), an optional leading `v`, and an optional pre-release tag
 * (`2.0-rc1`, `1.0-beta.2`, `3.1a`), which comes before the release it names. A missing part is 0.
 */
const LOOSE = /^v?(\d+(?:\.\d+)*)(?:[-._]?(dev|alpha|a|beta|b|rc|pre)[-.]?(\d*))?$/i;
const TAGS: Record<string, number> = { dev: 0, alpha: 1, a: 1, beta: 2, b: 2, rc: 3, pre: 3 };
/** A release with no tag: after every pre-release of it. */
const RELEASE = 4;

function looseParts(version: string): number[] | undefined {
  const m = LOOSE.exec(version.trim());
  if (!m) return undefined;
  const release = m[1]!.split('.').map(Number);
  return [...release, ...Array<number>(Math.max(0, 8 - release.length)).fill(0), m[2] ? TAGS[m[2].toLowerCase()]! : RELEASE, Number(m[3] || 0)];
}

/**
 * Orders two releases (negative: `a` is older, 0: the same release): numerically part by part, a
 * pre-release before its release. Undefined when either cannot be read even so (`trunk`): the caller
 * decides what an unknown order means.
 */
export function orderVersions(a: string, b: string): number | undefined {
  const x = looseParts(a);
  const y = looseParts(b);
  if (!x || !y || x.length !== y.length) return undefined;
  for (let i = 0; i < x.length; i++) if (x[i] !== y[i]) return x[i]! - y[i]!;
  return 0;
}
