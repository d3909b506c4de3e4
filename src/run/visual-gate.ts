import type { Logger } from 'pino';
import type { CameraPort, Shot, SiteCamera } from '../health/visual/screenshots.js';
import { namedAddress, type HealthSpec } from '../health/spec.js';
import { compareShots, expandCells, maskImage, noiseMask, type NoiseCells } from '../health/visual/compare.js';
import { decodePng, encodePng } from '../health/visual/image.js';
import { percentText, visualPages, type VisualSpec } from '../health/visual/spec.js';
import { sleepOn, type Clock } from '../util/clock.js';
import type { ImageKind, ImageStore } from './visual-images.js';
import type { VisualPage } from './types.js';
import { stepOutcome, type VisualSeen } from './visual-outcome.js';

/** A page as it was before the write: its first screenshot and its own noise, or why it could not be shot. */
interface PageBefore {
  url: string;
  shot?: Shot;
  noise?: { cells: NoiseCells; share: number };
  error?: string;
}

/** What a guarded write's visual check carries from before its send to after its operation. */
export interface VisualBaseline {
  pages: PageBefore[];
  /** The site's browser context, kept open for the screenshots after the write. */
  camera?: SiteCamera;
  /** Lets the site's browser context go (once, however often called). */
  close(): Promise<void>;
}

/** What the executor asks of the visual check; tests may script it. */
export interface VisualPort {
  before(stepId: string, url: string, spec: HealthSpec): Promise<VisualBaseline>;
  after(stepId: string, baseline: VisualBaseline, spec: HealthSpec): Promise<VisualSeen>;
}

/**
 * `health.visual`: each page shot twice before the write (`gap` apart: what differs is its own noise,
 * masked), once after it, and once more before a difference is acted on. The pictures of a page that
 * is not as it was are kept beside the report.
 */
export class VisualGate implements VisualPort {
  /** Per step: screenshots taken, the time they took, and the time spent comparing (logged once the step is judged). */
  readonly #cost = new Map<string, { shots: number; shoot_ms: number; compare_ms: number }>();

  constructor(
    private readonly camera: CameraPort,
    private readonly images: ImageStore,
    private readonly clock: Clock,
    private readonly logger: Logger,
    /** Ctrl-C: a gap ends at once, and what is left unshot is not compared. */
    private readonly signal?: AbortSignal,
  ) {}

  async before(stepId: string, url: string, spec: HealthSpec): Promise<VisualBaseline> {
    const visual = spec.visual!;
    const named = namedAddress(url, spec.url);
    const site = { width: visual.width, height: visual.height, ...(named ? { named } : {}), ...(spec.allow_private ? { allow_private: true as const } : {}) };
    let camera: SiteCamera;
    try {
      camera = await this.camera.site(site);
    } catch (error) {
      const why = `the browser could not open a page: ${firstLine(error)}`;
      return { pages: visualPages(visual, url).map((u) => ({ url: u, error: why })), close: () => Promise.resolve() };
    }
    const pages = await Promise.all(visualPages(visual, url).map((u) => this.#pageBefore(stepId, camera, u, visual)));
    return { pages, camera, close: () => camera.close() };
  }

  async #pageBefore(stepId: string, camera: SiteCamera, url: string, visual: VisualSpec): Promise<PageBefore> {
    try {
      const first = await this.#shoot(stepId, camera, url, visual);
      await sleepOn(this.clock, visual.gap_ms, this.signal);
      if (this.signal?.aborted) return { url, error: 'not shot: the run stopped' };
      const second = await this.#shoot(stepId, camera, url, visual);
      return { url, shot: first, noise: this.#timed(stepId, () => noiseMask(decodePng(first.png), decodePng(second.png))) };
    } catch (error) {
      return { url, error: firstLine(error) };
    }
  }

  async after(stepId: string, baseline: VisualBaseline, spec: HealthSpec): Promise<VisualSeen> {
    const visual = spec.visual!;
    const { camera } = baseline;
    try {
      const pages = await Promise.all(baseline.pages.map((page, i) => this.#pageAfter(stepId, i, page, camera, visual)));
      const seen = stepOutcome(pages, visual);
      this.logger.info({ step: stepId, outcome: seen.record.outcome, pages: pages.length, ...this.#cost.get(stepId) }, 'visual check');
      return seen;
    } finally {
      this.#cost.delete(stepId);
      await baseline.close();
    }
  }

  async #shoot(stepId: string, camera: SiteCamera, url: string, visual: VisualSpec): Promise<Shot> {
    const shot = await camera.shoot(url, visual);
    const cost = this.#costOf(stepId);
    cost.shots++;
    cost.shoot_ms += shot.ms ?? 0;
    return shot;
  }

  #timed<T>(stepId: string, work: () => T): T {
    const started = performance.now();
    const result = work();
    this.#costOf(stepId).compare_ms += Math.round(performance.now() - started);
    return result;
  }

  #costOf(stepId: string): { shots: number; shoot_ms: number; compare_ms: number } {
    let cost = this.#cost.get(stepId);
    if (!cost) this.#cost.set(stepId, (cost = { shots: 0, shoot_ms: 0, compare_ms: 0 }));
    return cost;
  }

  async #pageAfter(stepId: string, index: number, before: PageBefore, camera: SiteCamera | undefined, visual: VisualSpec): Promise<VisualPage> {
    const { url } = before;
    if (!before.shot || !before.noise || !camera)
      return { url, verdict: 'not checked', detail: `no screenshot before the write: ${before.error ?? 'not shot'}` };
    const noise_percent = Math.round(before.noise.share * 1000) / 10;
    const unstable = before.noise.share > visual.hold_over ? { unstable: true as const } : {};
    const look = async () => {
      const after = await this.#shoot(stepId, camera, url, visual);
      return this.#timed(stepId, () => judge(before.shot!, before.noise!.cells, after, visual));
    };
    let seen: Judged;
    try {
      seen = await look();
    } catch (error) {
      // Not looked at is not "as it was": the step is held (visual_unchecked), never passed.
      return { url, verdict: 'not checked', noise_percent, ...unstable, detail: `no screenshot after the write: ${firstLine(error)}` };
    }
    if (seen.page.verdict !== 'same') {
      // A page still settling (a late font, an image) is given one more look before it is held or restored; the first look stands if that one fails.
      await sleepOn(this.clock, visual.gap_ms, this.signal);
      seen = await look().catch(() => seen);
    }
    const page: VisualPage = { url, ...seen.page, noise_percent, ...unstable };
    if (page.verdict === 'same') return page;
    const images = this.#keep(stepId, index, { before: before.shot.png, after: seen.after, mask: seen.mask, diff: seen.diff });
    return images ? { ...page, images } : page;
  }

  /** The four pictures, or none when one cannot be written (said in the log: the verdict stands without them). */
  #keep(stepId: string, index: number, pngs: Record<ImageKind, Uint8Array>): VisualPage['images'] {
    try {
      const kept = Object.fromEntries(Object.entries(pngs).map(([kind, png]) => [kind, this.images.keep(stepId, index, kind as ImageKind, png)]));
      return kept as VisualPage['images'];
    } catch (error) {
      this.logger.warn({ step: stepId, err: (error as Error).message }, 'could not keep the screenshots of a changed page');
      return undefined;
    }
  }
}

/** An error's first line: playwright's messages go on with a call log nobody reading a report needs. */
function firstLine(error: unknown): string {
  return ((error as Error).message ?? String(error)).split('\n')[0]!.slice(0, 300);
}

interface Judged {
  page: Pick<VisualPage, 'verdict' | 'changed_percent' | 'detail'>;
  after: Uint8Array;
  mask: Uint8Array;
  diff: Uint8Array;
}

/** One page after the write against itself before: changed over hold_over, broken over restore_over, blank, or half its height gone or added. */
function judge(before: Shot, cells: NoiseCells, after: Shot, visual: VisualSpec): Judged {
  const a = decodePng(before.png);
  const b = decodePng(after.png);
  const mask = expandCells(cells, a.width, a.height);
  const found = compareShots(a, b, mask, { before: before.height > a.height, after: after.height > b.height });
  const heightChange = Math.abs(after.height - before.height) / Math.max(1, before.height);
  const detail = found.blank ? 'blank page' : heightChange > 0.5 ? `height ${before.height} → ${after.height} px` : undefined;
  const broken = detail !== undefined || found.changed > visual.restore_over;
  const verdict = broken ? 'broken' : found.changed > visual.hold_over ? 'changed' : 'same';
  const changed_percent = Number(percentText(found.changed).slice(0, -1));
  return {
    page: { verdict, changed_percent, ...(detail ? { detail } : {}) },
    after: after.png,
    mask: verdict === 'same' ? new Uint8Array() : encodePng(maskImage(a, mask)),
    diff: verdict === 'same' ? new Uint8Array() : encodePng(found.diff),
  };
}
