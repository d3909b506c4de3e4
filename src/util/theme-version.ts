/**
 * How far a theme update moves, as WordPress themes number their releases: two or three numeric
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
 * Orders two numbered versions (negative: `a` is older); undefined when either is not numbered, since
 * no order can be trusted between releases we cannot read.
 */
export function compareVersions(a: string, b: string): number | undefined {
  const x = versionParts(a);
  const y = versionParts(b);
  if (!x || !y) return undefined;
  return x[0] - y[0] || x[1] - y[1] || x[2] - y[2];
}
