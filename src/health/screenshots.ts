import { isIP } from 'node:net';
import PQueue from 'p-queue';
import type { Browser, BrowserContext, Page, Route } from 'playwright-core';
import { CHROMIUM_FLAGS, NO_SANDBOX } from '../util/chromium.js';
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
 * `concurrency` pages loading or being shot at once, each given PAGE_TIMEOUT_MS. A browser that goes
 * away mid-run (killed, crashed, out of memory) is started once more, and a site's context opened again
 * in it; a second loss is not retried: its pages are not looked at, which holds their steps.
 */
export class Screenshooter implements CameraPort {
  readonly #queue: PQueue;
  #browser: Browser;
  /** Set once the one restart was spent: why a browser lost again is not started a third time. */
  #restarted?: Promise<Browser>;
  #closed = false;

  private constructor(
    browser: Browser,
    private readonly start: () => Promise<Browser>,
    concurrency: number,
    private readonly userAgent: string,
    private readonly resolve: Resolver,
  ) {
    this.#browser = browser;
    this.#queue = new PQueue({ concurrency });
  }

  /** `sandbox: false` only when the playbook says settings.visual_sandbox: false (playwright's own default is no sandbox). */
  static async launch(executable: string, options: { concurrency: number; userAgent: string; sandbox: boolean; resolve?: Resolver }): Promise<Screenshooter> {
    const { chromium } = await import('playwright-core');
    const args = options.sandbox ? CHROMIUM_FLAGS : [...CHROMIUM_FLAGS, NO_SANDBOX];
    // A fresh profile per browser, in a temporary folder playwright removes when it closes (or the browser dies).
    const start = () => chromium.launch({ executablePath: executable, args, chromiumSandbox: options.sandbox, timeout: PAGE_TIMEOUT_MS });
    return new Screenshooter(await start(), start, options.concurrency, options.userAgent, options.resolve ?? systemResolver);
  }

  /** The browser to use now: the one running, or (once per run) a new one when it went away. */
  async #live(): Promise<Browser> {
    if (this.#browser.isConnected()) return this.#browser;
    if (this.#closed) throw new Error('the browser was closed');
    if (!this.#restarted) {
      this.#restarted = this.start().then(
        (browser) => (this.#browser = browser),
        (error: Error) => {
          throw new Error(`the browser went away and could not be started again: ${error.message.split('\n')[0]}`);
        },
      );
      return this.#restarted;
    }
    const again = await this.#restarted; // throws when the restart failed
    if (again.isConnected()) return again;
    throw new Error('the browser went away twice (it is restarted once per run)');
  }

  async site(options: SiteOptions): Promise<SiteCamera> {
    let open = await this.#context(options);
    let closed = false;
    /** The site's context in the browser running now: opened again when the browser was restarted. */
    const current = async (): Promise<BrowserContext> => {
      if (open.browser()?.isConnected()) return open;
      open = await this.#context(options);
      if (closed) await open.close();
      return open;
    };
    const shoot = async (url: string, shot: ShotOptions): Promise<Shot> => {
      const context = await current();
      try {
        return await shootPage(context, url, shot);
      } catch (error) {
        // The browser went away under this page: it is looked at once more in the browser started after it.
        if (context.browser()?.isConnected() !== false || closed) throw error;
        return shootPage(await current(), url, shot);
      }
    };
    return {
      shoot: (url, shot) => this.#queue.add(() => shoot(url, shot)),
      close: () => {
        closed = true;
        return closeOnce(open)();
      },
    };
  }

  /** A site's own context: its window, no service workers, and only the requests the filter lets go. */
  async #context(options: SiteOptions): Promise<BrowserContext> {
    const browser = await this.#live();
    const context = await browser.newContext({
      viewport: { width: options.width, height: options.height },
      deviceScaleFactor: 1,
      userAgent: this.userAgent,
      reducedMotion: 'reduce',
      serviceWorkers: 'block',
      // A page's own CSP must not keep `hide:` selectors from being hidden.
      bypassCSP: true,
      // Nothing is saved, granted or opened beside the page: downloads refused, no permission granted
      // (a prompt is denied in headless mode), and a pop-up closed as it opens.
      acceptDownloads: false,
      permissions: [],
    });
    // The pages sitefleet opens have no opener; one that has is a pop-up the page opened.
    context.on('page', (page) => {
      void page
        .opener()
        .then((opener) => (opener ? page.close() : undefined))
        .catch(() => undefined);
    });
    const refusals = new Map<string, Promise<string | undefined>>();
    await context.route('**/*', (route) => this.#filter(route, refusals, options));
    return context;
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
    this.#closed = true;
    this.#queue.clear();
    await this.#browser.close();
  }
}

const closing = new WeakMap<BrowserContext, Promise<void>>();

/** Closes a context once, however many times it is asked to (the step's end, and the run's). */
function closeOnce(context: BrowserContext): () => Promise<void> {
  return () => {
    let done = closing.get(context);
    if (!done) closing.set(context, (done = context.close().catch(() => undefined)));
    return done;
  };
}

/**
 * Loads the page, hides what is to be hidden, and shoots its top; the page is closed after. It gets
 * PAGE_TIMEOUT_MS in all, opening the page included, and ends at once when the browser goes away: a
 * call in flight then may never be answered.
 */
async function shootPage(context: BrowserContext, url: string, options: ShotOptions): Promise<Shot> {
  const started = performance.now();
  let page: Page | undefined;
  let timer: NodeJS.Timeout | undefined;
  let gone: (() => void) | undefined;
  const browser = context.browser();
  const ended = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no screenshot within ${PAGE_TIMEOUT_MS / 1000}s`)), PAGE_TIMEOUT_MS);
    gone = () => reject(new Error('the browser went away'));
    browser?.once('disconnected', gone);
    if (browser && !browser.isConnected()) gone();
  });
  const work = async (): Promise<Shot> => {
    page = await context.newPage();
    page.setDefaultTimeout(PAGE_TIMEOUT_MS);
    await page.goto(url, { waitUntil: 'load' });
    if (options.hide.length > 0) await page.addStyleTag({ content: options.hide.map((s) => `${s} { visibility: hidden !important; }`).join('\n') });
    const height = await page.evaluate<number>('Math.max(document.documentElement.scrollHeight, document.body ? document.body.scrollHeight : 0)');
    const clip = { x: 0, y: 0, width: options.width, height: Math.max(1, Math.min(options.max_height, height)) };
    const png = await page.screenshot({ fullPage: true, clip, animations: 'disabled', caret: 'hide' });
    return { png, height, ms: Math.round(performance.now() - started) };
  };
  const working = work();
  try {
    return await Promise.race([working, ended]);
  } finally {
    clearTimeout(timer);
    if (gone) browser?.off('disconnected', gone);
    // A page opened late (after the deadline) is closed when it comes; a browser gone has none to close.
    working.then(
      () => page?.close().catch(() => undefined),
      () => page?.close().catch(() => undefined),
    );
  }
}
