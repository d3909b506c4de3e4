import { PNG } from 'pngjs';

/** A screenshot as pixels: RGBA, row after row. */
export interface Image {
  width: number;
  height: number;
  data: Uint8Array;
}

/** The page's own noise, as cells of squares of pixels (compare.ts) (1: masked): small enough to keep for every page until its write ends. */
export interface NoiseCells {
  cols: number;
  rows: number;
  bits: Uint8Array;
}

export function decodePng(png: Uint8Array): Image {
  const read = PNG.sync.read(Buffer.from(png.buffer, png.byteOffset, png.byteLength));
  return { width: read.width, height: read.height, data: new Uint8Array(read.data.buffer, read.data.byteOffset, read.data.byteLength) };
}

/**
 * Every row filtered as "up" (PNG filter 2), not each of the five tried and the smallest kept (pngjs's
 * default), which made writing a page's mask and diff the slowest step of judging it: a broken night
 * writes both for every page that changed, on the event loop every write's polling shares. The files
 * come out a little larger; what they show is the same, pixel for pixel.
 */
const FILTER_UP = 2;

export function encodePng(image: Image): Buffer {
  const png = new PNG({ width: image.width, height: image.height });
  png.data = Buffer.from(image.data.buffer, image.data.byteOffset, image.data.byteLength);
  return PNG.sync.write(png, { filterType: FILTER_UP });
}

export function blankImage(width: number, height: number): Image {
  return { width, height, data: new Uint8Array(width * height * 4) };
}

/** The top `height` rows (or all of them), sharing no memory with the original. */
export function topRows(image: Image, height: number): Image {
  const rows = Math.min(height, image.height);
  return { width: image.width, height: rows, data: image.data.slice(0, rows * image.width * 4) };
}

/**
 * The share of the page in its most common colour, on a sample of its pixels: a page that shows
 * nothing (a white screen of death, a stylesheet-less error) is one colour almost everywhere.
 */
export function dominantShare(image: Image): number {
  const counts = new Map<number, number>();
  let sampled = 0;
  const step = 4 * 7; // every 7th pixel: enough to see a page, a fraction of the work
  for (let i = 0; i + 3 < image.data.length; i += step) {
    const key = (image.data[i]! << 16) | (image.data[i + 1]! << 8) | image.data[i + 2]!;
    counts.set(key, (counts.get(key) ?? 0) + 1);
    sampled++;
  }
  // A loop, not Math.max(...counts.values()): a photo-rich page has more colours than a call has room for arguments.
  let most = 0;
  for (const n of counts.values()) if (n > most) most = n;
  return sampled === 0 ? 1 : most / sampled;
}

/** A page is blank when this much of it is one colour. */
export const BLANK_SHARE = 0.995;
