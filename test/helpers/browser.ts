import { afterAll, afterEach } from 'vitest';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { decodePng } from '../../src/health/visual/image.js';
import { CHROMIUM_FLAGS, findChromium, NO_SANDBOX, onPath } from '../../src/util/chromium.js';

/**
 * Debian's Chromium headless shell (scripts/test-components.json installs it), found as `--pdf` and
 * `health.visual` find it; never a browser playwright downloads.
 */
export const CHROMIUM = findChromium(process.env);

/** Debian's full browser, `chromium` on PATH (installed beside the headless shell): what users without the shell run. */
export function fullChromium(): string {
  const path = onPath(process.env, 'chromium');
  if (!path) throw new Error('chromium (Debian package chromium) is not on PATH: npm test installs it');
  return path;
}

/** What a page did that a sitefleet page must never do: run script, open a dialog, ask for anything but itself. */
export interface PageWatch {
  page: Page;
  dialogs: string[];
  requests: string[];
}

/** A test's tab: its context, its page, and the file it shows now, whose watch its requests and dialogs go to. */
interface Tab {
  context: BrowserContext;
  page: Page;
  url: string;
  watch: PageWatch;
}

/**
 * Opens pages in headless Chromium: one browser for the test file (its start is most of a page's cost),
 * each test's pages in a fresh context of its own (an incognito profile: no cookie, cache or storage
 * shared with another test's), closed after it. A test's next page opens in the same tab, its watch
 * empty (a new tab starts a renderer: a second of CPU). Every request but the page's own file is
 * recorded and refused (so nothing leaves the machine either way).
 */
export function useBrowser() {
  let browser: Promise<Browser> | undefined;
  let tab: Tab | undefined;
  afterEach(async () => {
    const open = tab;
    tab = undefined;
    await open?.context.close();
  });
  afterAll(async () => {
    await (await browser)?.close();
  });
  async function newTab(): Promise<Tab> {
    browser ??= import('playwright-core').then(({ chromium }) =>
      // sitefleet's own pages, every request refused: as --pdf opens them (we run as root here).
      chromium.launch({ executablePath: CHROMIUM, args: [...CHROMIUM_FLAGS, NO_SANDBOX] }),
    );
    const context = await (await browser).newContext({ viewport: { width: 1100, height: 900 } });
    const page = await context.newPage();
    const made: Tab = { context, page, url: '', watch: { page, dialogs: [], requests: [] } };
    await context.route('**/*', async (route) => {
      if (route.request().url() === made.url) return route.continue();
      made.watch.requests.push(route.request().url());
      await route.abort();
    });
    page.on('request', (r) => void (r.url() === made.url || made.watch.requests.includes(r.url()) || made.watch.requests.push(r.url())));
    page.on('dialog', (d) => {
      made.watch.dialogs.push(d.message());
      void d.dismiss();
    });
    return made;
  }
  return {
    async open(file: string): Promise<PageWatch> {
      const open = (tab ??= await newTab());
      open.url = `file://${file}`;
      open.watch = { page: open.page, dialogs: [], requests: [] };
      await open.page.goto(open.url, { waitUntil: 'load' });
      return open.watch;
    },
  };
}

/**
 * How many distinct colours a PNG's pixels hold, up to a thousand: counted here, not on a page of the
 * browser's (each page it opens starts a renderer, a second of CPU).
 */
export function distinctColours(png: Uint8Array): number {
  const { data } = decodePng(png);
  const seen = new Set<number>();
  for (let i = 0; i < data.length && seen.size < 1000; i += 4) seen.add((data[i]! << 16) | (data[i + 1]! << 8) | data[i + 2]!);
  return seen.size;
}
