import { afterAll, afterEach } from 'vitest';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { CHROMIUM_FLAGS, findChromium, NO_SANDBOX } from '../../src/util/chromium.js';

/** Debian's chromium (scripts/test-components.json installs it), found as `--pdf` finds it; never a browser playwright downloads. */
export const CHROMIUM = findChromium(process.env);

/** What a page did that a sitefleet page must never do: run script, open a dialog, ask for anything but itself. */
export interface PageWatch {
  page: Page;
  dialogs: string[];
  requests: string[];
}

/**
 * Opens pages in headless Chromium: one browser for the test file (its start is most of a page's cost),
 * each page in a fresh context of its own (an incognito profile: no cookie, cache or storage shared),
 * closed after each test. Every request but the page's own file is recorded and refused (so nothing
 * leaves the machine either way).
 */
export function useBrowser() {
  let browser: Promise<Browser> | undefined;
  const contexts: BrowserContext[] = [];
  afterEach(async () => {
    for (const context of contexts.splice(0)) await context.close();
  });
  afterAll(async () => {
    await (await browser)?.close();
  });
  async function context(): Promise<BrowserContext> {
    browser ??= import('playwright-core').then(({ chromium }) =>
      // sitefleet's own pages, every request refused: as --pdf opens them (we run as root here).
      chromium.launch({ executablePath: CHROMIUM, args: [...CHROMIUM_FLAGS, NO_SANDBOX] }),
    );
    const ctx = await (await browser).newContext({ viewport: { width: 1100, height: 900 } });
    contexts.push(ctx);
    return ctx;
  }
  return {
    async open(file: string): Promise<PageWatch> {
      const ctx = await context();
      const url = `file://${file}`;
      const watch: PageWatch = { page: await ctx.newPage(), dialogs: [], requests: [] };
      await ctx.route('**/*', async (route) => {
        if (route.request().url() === url) return route.continue();
        watch.requests.push(route.request().url());
        await route.abort();
      });
      watch.page.on('request', (r) => void (r.url() === url || watch.requests.includes(r.url()) || watch.requests.push(r.url())));
      watch.page.on('dialog', (d) => {
        watch.dialogs.push(d.message());
        void d.dismiss();
      });
      await watch.page.goto(url, { waitUntil: 'load' });
      return watch;
    },
    /** How many distinct colours a PNG's pixels hold, counted by the browser's own decoder on a blank page. */
    async distinctColours(png: Buffer): Promise<number> {
      const page = await (await context()).newPage();
      // Run in the page (DOM types are not this project's): decode, draw, and count colours up to a thousand.
      const count = `(async () => {
        const bitmap = await createImageBitmap(await (await fetch('data:image/png;base64,${png.toString('base64')}')).blob());
        const canvas = new OffscreenCanvas(bitmap.width, bitmap.height);
        const g = canvas.getContext('2d');
        g.drawImage(bitmap, 0, 0);
        const data = g.getImageData(0, 0, bitmap.width, bitmap.height).data;
        const seen = new Set();
        for (let i = 0; i < data.length && seen.size < 1000; i += 4) seen.add((data[i] << 16) | (data[i + 1] << 8) | data[i + 2]);
        return seen.size;
      })()`;
      return page.evaluate<number>(count);
    },
  };
}
