import type { Image } from './image.js';

/**
 * How far content may move up or down between the two screenshots and still be matched row to row: a
 * banner added above the fold moves everything under it, and only the banner is a change.
 */
export const MAX_SHIFT_ROWS = 400;

/** One row of the aligned pair: the row of each screenshot shown there, or -1 where one side has none (added or removed). */
export type Line = [before: number, after: number];

/** A hash of each row's pixels (FNV-1a over its bytes): equal rows are found by their hash. */
export function rowHashes(image: Image): Uint32Array {
  const hashes = new Uint32Array(image.height);
  const rowBytes = image.width * 4;
  for (let y = 0; y < image.height; y++) {
    let h = 0x811c9dc5;
    for (let i = y * rowBytes, end = i + rowBytes; i < end; i++) h = Math.imul(h ^ image.data[i]!, 0x01000193);
    hashes[y] = h >>> 0;
  }
  return hashes;
}

/**
 * The rows of the two screenshots paired as a text diff pairs lines: the longest run of equal rows
 * in order (a longest common subsequence, within MAX_SHIFT_ROWS of each other, the earliest rows matched
 * when several runs are as long), then the rows between two matches paired in order (a row changed in place), and the rest alone (added or removed).
 * When the heights differ by more than the band allows, rows are paired as they stand.
 */
export function alignRows(before: Uint32Array, after: Uint32Array, band = MAX_SHIFT_ROWS): Line[] {
  const n = before.length;
  const m = after.length;
  if (Math.abs(n - m) > band) return straight(n, m);
  // Found from the ends backwards, so that among equally long runs the earliest rows are matched and
  // what is left over sits as late as it can: a tail one screenshot cut off (max_height) stays a tail,
  // not a gap in the middle with the last blank rows matched to each other.
  const matches = commonRows(before.slice().reverse(), after.slice().reverse(), band)
    .map(([i, j]): Line => [n - 1 - i, m - 1 - j])
    .reverse();
  const lines: Line[] = [];
  let i = 0;
  let j = 0;
  for (const [mi, mj] of [...matches, [n, m] as Line]) {
    const paired = Math.min(mi - i, mj - j);
    for (let k = 0; k < paired; k++) lines.push([i + k, j + k]);
    for (let k = paired; k < mi - i; k++) lines.push([i + k, -1]);
    for (let k = paired; k < mj - j; k++) lines.push([-1, j + k]);
    if (mi < n) lines.push([mi, mj]);
    i = mi + 1;
    j = mj + 1;
  }
  return lines;
}

function straight(n: number, m: number): Line[] {
  return Array.from({ length: Math.max(n, m) }, (_, k): Line => [k < n ? k : -1, k < m ? k : -1]);
}

/** The matched row pairs of a banded LCS, in order. Cells outside the band are never reached. */
function commonRows(before: Uint32Array, after: Uint32Array, band: number): Line[] {
  const n = before.length;
  const m = after.length;
  const width = 2 * band + 1;
  const NONE = -1;
  // score[i][j] lives at i * width + (j - i + band): only the diagonal band is kept.
  const score = new Int32Array((n + 1) * width).fill(NONE);
  const at = (i: number, j: number) => (j < 0 || j > m || Math.abs(j - i) > band ? NONE : score[i * width + (j - i + band)]!);
  for (let i = 0; i <= n; i++) {
    for (let j = Math.max(0, i - band); j <= Math.min(m, i + band); j++) {
      let best = i === 0 || j === 0 ? 0 : Math.max(at(i - 1, j), at(i, j - 1));
      if (i > 0 && j > 0 && before[i - 1] === after[j - 1]) best = Math.max(best, at(i - 1, j - 1) + 1);
      score[i * width + (j - i + band)] = best;
    }
  }
  const pairs: Line[] = [];
  for (let i = n, j = m; i > 0 && j > 0;) {
    if (before[i - 1] === after[j - 1] && at(i, j) === at(i - 1, j - 1) + 1) {
      pairs.push([--i, --j]);
    } else if (at(i - 1, j) >= at(i, j - 1)) i--;
    else j--;
  }
  return pairs.reverse();
}
