import { isIP } from 'node:net';
import PQueue from 'p-queue';
import type { Browser, BrowserContext, Route } from 'playwright-core';
import { CHROMIUM_FLAGS } from '../util/chromium.js';
import { addressRefusal, nameRefusal } from './address.js';
import { systemResolver, type Resolver } from './lookup.js';
import { PAGE_TIMEOUT_MS } from './visual-spec.js';

/** One screenshot: the PNG of the top of the page, the page's whole height in CSS pixels, and the ms it took (waiting for a turn not counted). */
export interface Shot {
  png: Buffer;
  height: number;
  ms?: number;
}

/** How a page is shot: the window, how much of the page, what to hide, and where its resources may come from. */
export interface ShotOptions {
  width: number;
  height: number;
  max_height: number;
  hide: string[];
  allow_private?: true;
}

/** A site's own browser context: its cookies and cache stay its own, and go when it is closed. */
export interface SiteCamera {
  shoot(url: string, options: ShotOptions): Promise<Shot>;
  close(): Promise<void>;
}

/** A site's context: its window, and the host its pages are on (`host:port`, as a URL has it). */
export type SiteOptions = Pick<ShotOptions, 'width' | 'height' | 'allow_private'> & { host: string };

/** What a visual check needs of the browser: tests may script it, the CLI passes a Screenshooter. */
export interface CameraPort {
  site(options: SiteOptions): Promise<SiteCamera>;
  close(): Promise<void>;
}

/**
 * The machine's own Chromium, driven by playwright-core (loaded here, when a playbook asks for a
 * visual check, and never before): one browser process for the run, one context per site, at most
 * `concurrency` pages loading or being shot at once, each given PAGE_TIMEOUT_MS.
 */
export class Screenshooter implements CameraPort {
  readonly #queue: PQueue;

  private constructor(
    private readonly browser: Browser,
    concurrency: number,
    private readonly userAgent: string,
    private readonly resolve: Resolver,
  ) {
    this.#queue = new PQueue({ concurrency });
  }

  static async launch(executable: string, options: { concurrency: number; userAgent: string; resolve?: Resolver }): Promise<Screenshooter> {
    const { chromium } = await import('playwright-core');
    const browser = await chromium.launch({ executablePath: executable, args: CHROMIUM_FLAGS, timeout: PAGE_TIMEOUT_MS });
    return new Screenshooter(browser, options.concurrency, options.userAgent, options.resolve ?? systemResolver);
  }

  async site(options: SiteOptions): Promise<SiteCamera> {
    const context = await this.browser.newContext({
      viewport: { width: options.width, height: options.height },
      deviceScaleFactor: 1,
      userAgent: this.userAgent,
      reducedMotion: 'reduce',
      serviceWorkers: 'block',
      // A page's own CSP must not keep `hide:` selectors from being hidden.
      bypassCSP: true,
    });
    const refusals = new Map<string, Promise<string | undefined>>();
    await context.route('**/*', (route) => this.#filter(route, refusals, options));
    return { shoot: (url, shot) => this.#queue.add(() => shootPage(context, url, shot)), close: closeOnce(context) };
  }

  /**
   * A page's resources come from where a check may go (see address.ts): its own host, or hosts whose
   * addresses are on the internet (unless `allow_private`), so a site cannot have the browser fetch a
   * service of the runner's network into a screenshot. The site's own host was checked by the health
   * check before any screenshot is taken.
   */
  async #filter(route: Route, refusals: Map<string, Promise<string | undefined>>, site: SiteOptions): Promise<void> {
    const url = new URL(route.request().url());
    if (!/^https?:$/.test(url.protocol)) return route.abort('blockedbyclient');
    if (site.allow_private || url.host === site.host) return route.continue();
    let why = refusals.get(url.hostname);
    if (!why) refusals.set(url.hostname, (why = this.#hostRefusal(url.hostname)));
    return (await why) ? route.abort('blockedbyclient') : route.continue();
  }

  async #hostRefusal(host: string): Promise<string | undefined> {
    const bare = host.replace(/^\[|\]$/g, '');
    if (isIP(bare)) return addressRefusal(bare);
    const named = nameRefusal(host);
    if (named) return named;
    try {
      const addresses = await this.resolve(host);
      return addresses.map((a) => addressRefusal(a.address)).find(Boolean);
    } catch {
      return 'does not resolve';
    }
  }

  async close(): Promise<void> {
    this.#queue.clear();
    await this.browser.close();
  }
}

/** Closes a context once, however many times it is asked to (the step's end, and the run's). */
function closeOnce(context: BrowserContext): () => Promise<void> {
  let closing: Promise<void> | undefined;
  return () => (closing ??= context.close().catch(() => undefined));
}

/** Loads the page, hides what is to be hidden, and shoots its top; the page is closed after, and given PAGE_TIMEOUT_MS in all. */
async function shootPage(context: BrowserContext, url: string, options: ShotOptions): Promise<Shot> {
  const started = performance.now();
  const page = await context.newPage();
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no screenshot within ${PAGE_TIMEOUT_MS / 1000}s`)), PAGE_TIMEOUT_MS);
  });
  const work = async (): Promise<Shot> => {
    page.setDefaultTimeout(PAGE_TIMEOUT_MS);
    await page.goto(url, { waitUntil: 'load' });
    if (options.hide.length > 0) await page.addStyleTag({ content: options.hide.map((s) => `${s} { visibility: hidden !important; }`).join('\n') });
    const height = await page.evaluate<number>('Math.max(document.documentElement.scrollHeight, document.body ? document.body.scrollHeight : 0)');
    const clip = { x: 0, y: 0, width: options.width, height: Math.max(1, Math.min(options.max_height, height)) };
    const png = await page.screenshot({ fullPage: true, clip, animations: 'disabled', caret: 'hide' });
    return { png, height, ms: Math.round(performance.now() - started) };
  };
  try {
    return await Promise.race([work(), deadline]);
  } finally {
    clearTimeout(timer);
    await page.close().catch(() => undefined);
  }
}
