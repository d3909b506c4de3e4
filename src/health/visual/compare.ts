import pixelmatch from 'pixelmatch';
import { alignRows, rowHashes, type Line } from './align.js';
import { BLANK_SHARE, blankImage, dominantShare, type Image, type NoiseCells } from './image.js';

export type { NoiseCells } from './image.js';

/** Two colours closer than this (pixelmatch's OKLab distance, 0 to 1) are the same colour: font smoothing is not a change. */
const THRESHOLD = 0.1;
/** Noise is masked in squares of this side, and one square around each: a carousel's next slide differs where its last one did not. */
const CELL = 16;

/**
 * The page's own noise: the cells where two screenshots taken before the write differ, and the cells
 * around them. A page longer in one screenshot than the other is noise below the shorter one.
 * `share` is the share of pixels that differed: over `hold_over`, the page is unstable.
 */
export function noiseMask(a: Image, b: Image): { cells: NoiseCells; share: number } {
  const rows = Math.min(a.height, b.height);
  const differs = new Uint8Array(a.width * rows * 4);
  const same = a.width === b.width;
  const count = same
    ? pixelmatch(a.data.subarray(0, differs.length), b.data.subarray(0, differs.length), differs, a.width, rows, {
        threshold: THRESHOLD,
        includeAA: true,
        diffMask: true,
      })
    : a.width * rows;
  const cols = Math.ceil(a.width / CELL);
  const cellRows = Math.ceil(a.height / CELL);
  const noisy = new Uint8Array(cols * cellRows);
  for (let y = 0; y < a.height; y++)
    for (let x = 0; x < a.width; x++) if (!same || y >= rows || differs[(y * a.width + x) * 4 + 3]! > 0) noisy[((y / CELL) | 0) * cols + ((x / CELL) | 0)] = 1;
  const bits = new Uint8Array(cols * cellRows);
  for (let cy = 0; cy < cellRows; cy++) for (let cx = 0; cx < cols; cx++) bits[cy * cols + cx] = nearNoise(noisy, cols, cellRows, cx, cy) ? 1 : 0;
  const outside = Math.abs(a.height - b.height) * a.width;
  return { cells: { cols, rows: cellRows, bits }, share: (count + outside) / (a.width * Math.max(a.height, b.height, 1)) };
}

function nearNoise(noisy: Uint8Array, cols: number, rows: number, cx: number, cy: number): boolean {
  for (let y = Math.max(0, cy - 1); y <= Math.min(rows - 1, cy + 1); y++)
    for (let x = Math.max(0, cx - 1); x <= Math.min(cols - 1, cx + 1); x++) if (noisy[y * cols + x]) return true;
  return false;
}

/** The cells as one byte per pixel of a `width`×`height` screenshot (pixelmatch's ignoreMask). */
export function expandCells(cells: NoiseCells, width: number, height: number): Uint8Array {
  const mask = new Uint8Array(width * height);
  for (let y = 0; y < height; y++) {
    const cy = (y / CELL) | 0;
    if (cy >= cells.rows) break;
    for (let cx = 0; cx < cells.cols; cx++)
      if (cells.bits[cy * cells.cols + cx]) mask.fill(1, y * width + cx * CELL, y * width + Math.min(width, (cx + 1) * CELL));
  }
  return mask;
}

/** What the comparison of one page found. */
export interface Comparison {
  /**
   * Share of the page that changed, 0 to 1: changed pixels over the pixels of the two screenshots
   * aligned (a row in both counts once, a row in one only counts too), so never more than all of it.
   */
  changed: number;
  /** The page shows (almost) one colour after the write, and did not before. */
  blank: boolean;
  /** The after screenshot, aligned to the before one, with the changes in red (added or removed rows all red). */
  diff: Image;
}

/** Which screenshots stop at max_height with more of the page below: their last rows are not its end. */
export interface Clipped {
  before?: boolean;
  after?: boolean;
}

/**
 * Compares the screenshot after the write with the one before, masked by the page's noise, row
 * shifts forgiven (align.ts): rows in both are compared pixel by pixel, rows in one only
 * count whole.
 */
export function compareShots(before: Image, after: Image, mask: Uint8Array, clipped: Clipped = {}): Comparison {
  const blank = dominantShare(after) >= BLANK_SHARE && dominantShare(before) < BLANK_SHARE;
  const width = before.width;
  if (after.width !== width) return { changed: 1, blank, diff: after };
  const lines = unclippedLines(alignRows(rowHashes(before), rowHashes(after)), clipped);
  const [a, b, ignore] = [blankImage(width, lines.length), blankImage(width, lines.length), new Uint8Array(width * lines.length)];
  let alone = 0;
  lines.forEach(([i, j], y) => {
    if (i >= 0) a.data.set(before.data.subarray(i * width * 4, (i + 1) * width * 4), y * width * 4);
    if (j >= 0) b.data.set(after.data.subarray(j * width * 4, (j + 1) * width * 4), y * width * 4);
    if (i >= 0 && j >= 0) ignore.set(mask.subarray(i * width, (i + 1) * width), y * width);
    else {
      ignore.fill(1, y * width, (y + 1) * width);
      alone++;
    }
  });
  const diff = blankImage(width, lines.length);
  const count = pixelmatch(a.data, b.data, diff.data, width, lines.length, { threshold: THRESHOLD, ignoreMask: ignore });
  paintAlone(diff, lines);
  // pixelmatch counts paired rows only (the rows in one screenshot are ignored there): at most every pixel of the lines, once.
  return { changed: lines.length === 0 ? 0 : (count + alone * width) / (width * lines.length), blank, diff };
}

/**
 * The aligned rows without the tail one screenshot has only because the other stopped at max_height:
 * a bar added at the top pushes as many rows below the clip of the screenshot after, and those rows
 * were not removed. Counting them would count the bar twice.
 */
function unclippedLines(lines: Line[], clipped: Clipped): Line[] {
  let end = lines.length;
  while (end > 0) {
    const [i, j] = lines[end - 1]!;
    const onlyBefore = j < 0 && clipped.after;
    const onlyAfter = i < 0 && clipped.before;
    if (!onlyBefore && !onlyAfter) break;
    end--;
  }
  return end === lines.length ? lines : lines.slice(0, end);
}

/** Rows in one screenshot only: red across, as pixelmatch paints a changed pixel. */
function paintAlone(diff: Image, lines: Line[]): void {
  lines.forEach(([i, j], y) => {
    if (i >= 0 && j >= 0) return;
    for (let x = 0; x < diff.width; x++) diff.data.set([255, 0, 0, 255], (y * diff.width + x) * 4);
  });
}

/** The mask as a picture: the first screenshot, with what is masked in magenta. */
export function maskImage(before: Image, mask: Uint8Array): Image {
  const out = { width: before.width, height: before.height, data: before.data.slice() };
  for (let p = 0; p < mask.length; p++) if (mask[p]) out.data.set([255, 0, 255, 255], p * 4);
  return out;
}
