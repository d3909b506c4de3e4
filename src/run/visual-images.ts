import { basename, join } from 'node:path';
import { outputFolder, writeOutput } from '../util/output-file.js';

/** The four pictures of a page that changed: the screenshot before, after, the noise mask and the diff. */
export type ImageKind = 'before' | 'after' | 'mask' | 'diff';

/** Where a visual check keeps its pictures: tests may keep them in memory, a run writes them beside its report. */
export interface ImageStore {
  /** Keeps one picture; returns its path relative to the report's folder. */
  keep(stepId: string, page: number, kind: ImageKind, png: Uint8Array): string;
}

/** The folder of a report's pictures: `<report>.visual`, beside it. */
export function imagesFolderOf(reportPath: string): string {
  return `${reportPath}.visual`;
}

/**
 * Pictures beside the report (`<report>.visual/<step>-p<page>-<kind>.png`), each written as every
 * output is (util/output-file.ts: a temporary file renamed into place, never through a link, only
 * over a PNG). A step id holds the service's ids: its file name keeps letters, digits, `.`, `_`, `-`.
 */
export class ReportImages implements ImageStore {
  readonly #folder: string;
  #made = false;

  constructor(reportPath: string) {
    this.#folder = imagesFolderOf(reportPath);
  }

  keep(stepId: string, page: number, kind: ImageKind, png: Uint8Array): string {
    if (!this.#made) outputFolder('images folder', this.#folder);
    this.#made = true;
    const name = `${stepId.replace(/[^A-Za-z0-9._-]/g, '_').slice(0, 120)}-p${page}-${kind}.png`;
    writeOutput({ flag: 'image', path: join(this.#folder, name), kind: 'png' }, png);
    return `${basename(this.#folder)}/${name}`;
  }
}
