import PQueue from 'p-queue';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { CHROMIUM_FLAGS, NO_SANDBOX } from '../../util/chromium.js';
import { systemResolver, type Resolver } from '../http/lookup.js';
import { PageProxy } from './page-proxy.js';
import { PAGE_TIMEOUT_MS } from './spec.js';

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

/**
 * A site's context: its window, where its pages may go (`allow_private`), and `named`, the address and
 * port its pages are on when the playbook's own `health.url` names them by address (`127.0.0.1:8080`).
 */
export type SiteOptions = Pick<ShotOptions, 'width' | 'height' | 'allow_private'> & { named?: string };

/** What a visual check needs of the browser: tests may script it, the CLI passes a Screenshooter. */
export interface CameraPort {
  site(options: SiteOptions): Promise<SiteCamera>;
  close(): Promise<void>;
}

/**
 * What the visual check's Chromium is told beside CHROMIUM_FLAGS: resolve no name itself (every request
 * goes through a PageProxy, which resolves and checks), and send no UDP of WebRTC's outside the proxy
 * (a page could otherwise reach an address of the machine's network without any request). That policy
 * takes two flags: the full browser reads `--webrtc-ip-handling-policy` and ignores the `force` one;
 * the headless shell has no such setting of the browser's and reads only `--force-…` (without it, a
 * page's STUN datagrams reached 127.0.0.1: test/health/visual/browser-proxy.test.ts).
 */
const PAGE_FLAGS = [
  '--host-resolver-rules=MAP * ~NOTFOUND , EXCLUDE 127.0.0.1',
  '--webrtc-ip-handling-policy=disable_non_proxied_udp',
  '--force-webrtc-ip-handling-policy=disable_non_proxied_udp',
];

/** Loopback is proxied too: Chromium sends `localhost` and 127.0.0.1 past a proxy unless told otherwise. */
const PROXY_LOOPBACK = '<-loopback>';

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
  /** The proxies of site cameras not yet let go of: closed with the browser, which their contexts die with, as they listen in this process. */
  readonly #sites = new Set<PageProxy>();

  private constructor(
    browser: Browser,
    private readonly start: () => Promise<Browser>,
    concurrency: number,
    private readonly userAgent: string,
    private readonly resolve: Resolver,
    /** The browser's own proxy (nothing of the network's allowed): what no site's context overrides goes there. */
    private readonly proxy: PageProxy,
  ) {
    this.#browser = browser;
    this.#queue = new PQueue({ concurrency });
  }

  /** `sandbox: false` only when the playbook says settings.visual_sandbox: false (playwright's own default is no sandbox). */
  static async launch(executable: string, options: { concurrency: number; userAgent: string; sandbox: boolean; resolve?: Resolver }): Promise<Screenshooter> {
    const { chromium } = await import('playwright-core');
    const args = [...CHROMIUM_FLAGS, ...PAGE_FLAGS, ...(options.sandbox ? [] : [NO_SANDBOX])];
    const resolve = options.resolve ?? systemResolver;
    const proxy = await PageProxy.start({ resolve, allowPrivate: false, nowhere: true });
    // A fresh profile per browser, in a temporary folder playwright removes when it closes (or the browser dies).
    const start = () =>
      chromium.launch({
        executablePath: executable,
        args,
        chromiumSandbox: options.sandbox,
        timeout: PAGE_TIMEOUT_MS,
        proxy: { server: proxy.server, bypass: PROXY_LOOPBACK },
      });
    try {
      return new Screenshooter(await start(), start, options.concurrency, options.userAgent, resolve, proxy);
    } catch (error) {
      await proxy.close();
      throw error;
    }
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
    const rule = { resolve: this.resolve, allowPrivate: options.allow_private === true, ...(options.named ? { named: options.named } : {}) };
    const proxy = await PageProxy.start(rule);
    let open: BrowserContext;
    try {
      open = await this.#context(options, proxy);
      if (this.#closed) throw new Error('the browser was closed'); // while this context was opened: its proxy is not kept
    } catch (error) {
      await proxy.close();
      throw error;
    }
    this.#sites.add(proxy);
    let closed = false;
    /** The site's context in the browser running now: opened again when the browser was restarted. */
    const current = async (): Promise<BrowserContext> => {
      if (open.browser()?.isConnected()) return open;
      open = await this.#context(options, proxy);
      if (closed) await open.close();
      return open;
    };
    const shoot = async (url: string, shot: ShotOptions): Promise<Shot> => {
      const context = await current();
      try {
        return await shootPage(context, url, shot, proxy);
      } catch (error) {
        // The browser went away under this page: it is looked at once more in the browser started after it.
        if (context.browser()?.isConnected() !== false || closed) throw error;
        return shootPage(await current(), url, shot, proxy);
      }
    };
    return {
      shoot: (url, shot) => this.#queue.add(() => shoot(url, shot)),
      close: async () => {
        closed = true;
        await closeOnce(open)();
        if (this.#sites.delete(proxy)) await proxy.close();
      },
    };
  }

  /**
   * A site's own context: its window, no service workers, and every request through the site's proxy,
   * which lets a page reach only where a check may go (see PageProxy): its playbook-named address, or
   * hosts whose addresses are on the internet (unless `allow_private`).
   */
  async #context(options: SiteOptions, proxy: PageProxy): Promise<BrowserContext> {
    const browser = await this.#live();
    const context = await browser.newContext({
      proxy: { server: proxy.server, bypass: PROXY_LOOPBACK },
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
    return context;
  }

  async close(): Promise<void> {
    this.#closed = true;
    this.#queue.clear();
    try {
      await this.#browser.close();
    } finally {
      // A camera the run forgot to let go of would keep the process from exiting after its summary.
      const left = [...this.#sites];
      this.#sites.clear();
      await Promise.all([...left, this.proxy].map((proxy) => proxy.close()));
    }
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
async function shootPage(context: BrowserContext, url: string, options: ShotOptions, proxy: PageProxy): Promise<Shot> {
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
    const refused = proxy.refused;
    await page.goto(url, { waitUntil: 'load' }).catch((error: Error) => {
      // A page led where a check may not go says where, not only the browser's net::ERR_….
      throw proxy.refused > refused ? new Error(`${error.message.split('\n')[0]} (refused: ${proxy.lastRefusal})`) : error;
    });
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
