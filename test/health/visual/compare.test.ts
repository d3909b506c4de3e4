import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { alignRows, rowHashes } from '../../../src/health/visual/align.js';
import { compareShots, expandCells, noiseMask } from '../../../src/health/visual/compare.js';
import { decodePng, encodePng, topRows, type Image } from '../../../src/health/visual/image.js';

/** A page of `rows` rows, 200 wide: a grey band every 10 rows (each band a different grey), white between, so rows are told apart. */
function page(rows: number, paint?: (x: number, y: number) => [number, number, number] | undefined): Image {
  const data = new Uint8Array(200 * rows * 4);
  for (let y = 0; y < rows; y++)
    for (let x = 0; x < 200; x++) {
      const band = y % 10 < 3 ? (y * 7) % 200 : 255;
      data.set([...(paint?.(x, y) ?? [band, band, band]), 255], (y * 200 + x) * 4);
    }
  return { width: 200, height: rows, data };
}

/** The same page with `added` rows of red inserted at row `at`: what is under them moves down. */
function inserted(base: Image, at: number, added: number): Image {
  const out = new Uint8Array(base.data.length + added * 200 * 4);
  out.set(base.data.subarray(0, at * 800), 0);
  for (let p = at * 200; p < (at + added) * 200; p++) out.set([255, 0, 0, 255], p * 4);
  out.set(base.data.subarray(at * 800), (at + added) * 800);
  return { width: 200, height: base.height + added, data: out };
}

const none = (image: Image) => new Uint8Array(image.width * image.height);

describe('comparing two screenshots', () => {
  it('the same page: nothing changed', () => {
    expect(compareShots(page(300), page(300), none(page(300))).changed).toBe(0);
  });

  it('a band added near the top moves the rest down: only the band counts, not the rows under it', () => {
    const before = page(300);
    const after = inserted(before, 40, 12);
    const { changed, diff } = compareShots(before, after, none(before));
    expect(changed).toBeCloseTo(12 / 312, 3);
    expect(diff.height).toBe(312);
    // Without the alignment, every row under the band would differ.
    expect(alignRows(rowHashes(before), rowHashes(after)).filter(([i, j]) => i < 0 || j < 0)).toHaveLength(12);
  });

  it('a box recoloured in place counts its pixels only (pixelmatch may read a few of its edge pixels as anti-aliasing)', () => {
    const before = page(300);
    const after = page(300, (x, y) => (x >= 50 && x < 100 && y >= 100 && y < 120 ? [0, 0, 200] : undefined));
    const box = (50 * 20) / (200 * 300);
    const { changed } = compareShots(before, after, none(before));
    expect(changed).toBeGreaterThan(0.8 * box);
    expect(changed).toBeLessThanOrEqual(box);
  });

  it('noise between the two screenshots before is masked: a slide that moves again after the write is no change', () => {
    const slide = (colour: [number, number, number]) => page(300, (x, y) => (x >= 120 && x < 180 && y >= 200 && y < 230 ? colour : undefined));
    const { cells, share } = noiseMask(slide([200, 0, 0]), slide([0, 200, 0]));
    expect(share).toBeCloseTo((60 * 30) / (200 * 300), 3);
    const before = slide([200, 0, 0]);
    const after = slide([0, 0, 200]);
    expect(compareShots(before, after, none(before)).changed).toBeGreaterThan(0);
    expect(compareShots(before, after, expandCells(cells, 200, 300)).changed).toBe(0);
  });

  it('a page that turned one colour is blank; one that always was is not', () => {
    const white = page(300, () => [255, 255, 255]);
    expect(compareShots(page(300), white, none(white)).blank).toBe(true);
    expect(compareShots(white, white, none(white)).blank).toBe(false);
  });

  it('the share changed is 0 to 1 whatever the two pages: rows in one only and changed rows are counted over the rows of both, aligned', () => {
    // Before: 200 rows of its own, then 10 rows the page after starts with, then 200 rows of its own
    // (a style sheet gone: little in common, and that little moved). Over the larger screenshot's
    // pixels this read 400 rows of 210: 190% of the page.
    const own =
      (seed: number) =>
      (x: number, y: number): [number, number, number] => [(y * 13 + seed) % 256, (y * 29 + seed * 7) % 256, seed];
    const common = page(10, () => [10, 20, 30]);
    const stack = (...parts: Image[]): Image => {
      const data = new Uint8Array(parts.reduce((n, p) => n + p.data.length, 0));
      let at = 0;
      for (const p of parts) data.set(p.data, (at += p.data.length) - p.data.length);
      return { width: 200, height: parts.reduce((n, p) => n + p.height, 0), data };
    };
    const before = stack(page(200, own(1)), common);
    const after = stack(common, page(200, own(2)));
    const { changed } = compareShots(before, after, none(before));
    expect(changed).toBeCloseTo(400 / 410, 3);
    // Any two pages made of a few kinds of row: never under 0, never over 1.
    const rows = fc.array(fc.integer({ min: 0, max: 3 }), { minLength: 1, maxLength: 60 });
    const ofRows = (kinds: number[]) => page(kinds.length, (_, y) => [kinds[y]! * 60, 0, 0]);
    fc.assert(
      fc.property(rows, rows, (x, y) => {
        const share = compareShots(ofRows(x), ofRows(y), none(ofRows(x))).changed;
        return share >= 0 && share <= 1;
      }),
    );
  });

  it('a bar added at the top of a page longer than max_height counts once: the rows it pushes below the clip were not removed', () => {
    const whole = page(600);
    const before = topRows(whole, 300);
    const after = topRows(inserted(whole, 40, 12), 300);
    const { changed } = compareShots(before, after, none(before), { before: true, after: true });
    // 12 rows added, of the 300 aligned: not 12 added and the 12 last ones "removed" (24 of 312).
    expect(changed).toBeCloseTo(12 / 300, 4);
    // Without the clip said, the tail is a removal as the rows say.
    expect(compareShots(before, after, none(before)).changed).toBeCloseTo(24 / 312, 4);
  });

  it('a page of many colours (a photo) is compared, not thrown on: more colours than a call takes arguments', () => {
    const width = 1280;
    const height = 3000;
    const data = new Uint8Array(width * height * 4);
    for (let p = 0; p < width * height; p++) data.set([p & 0xff, (p >> 8) & 0xff, (p >> 16) & 0xff, 255], p * 4);
    const photo = { width, height, data };
    const found = compareShots(photo, photo, new Uint8Array(width * height));
    expect(found).toMatchObject({ changed: 0, blank: false });
  });

  it('PNG round trip keeps every pixel', () => {
    const image = page(50);
    expect(decodePng(encodePng(image)).data).toEqual(image.data);
  });
});
