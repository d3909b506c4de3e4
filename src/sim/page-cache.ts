import type { SiteLook } from './site-look.js';

/**
 * What the origin served for a page, as the cache keeps it: a healthy page's name and look. The
 * carousel's slide is not kept: on a real site a script turns it in the visitor's browser, cached
 * page or not.
 */
export interface CachedView {
  name: string;
  look?: SiteLook;
}

/** The vendor's documentation: the server cache expires every 24 hours by default. */
export const PAGE_CACHE_TTL_MS = 24 * 60 * 60_000;
/** The vendor's documentation: manual clears are limited to one every 10 seconds (per environment). */
export const CLEAR_CACHE_GAP_MS = 10_000;

/**
 * Each environment's page cache, as an edge cache or CDN in front of the site keeps it: the first
 * healthy answer for a page (host and path) is served to every visitor after it until it expires or
 * is cleared (`POST /sites/tools/clear-cache`). A write does not purge it: a theme update leaves the
 * page as it was. Its key ignores the query string and the request's headers, as many page caches
 * do, so a cache-busting parameter or `Cache-Control: no-cache` does not get past it. Only 200s are
 * kept: a server error is not cached, as page caches usually do.
 */
export class PageCache {
  readonly #pages = new Map<string, Map<string, { view: CachedView; until: number }>>();
  readonly #lastClear = new Map<string, number>();

  constructor(
    private readonly now: () => number,
    /** How long a kept page is served. 0: no cache at all. */
    private readonly ttlMs = PAGE_CACHE_TTL_MS,
    /** The least time between two manual clears of one environment. */
    private readonly clearGapMs = CLEAR_CACHE_GAP_MS,
  ) {}

  /** The page kept for `envId` at `key`, while it has not expired. */
  get(envId: string, key: string): CachedView | undefined {
    const kept = this.#pages.get(envId)?.get(key);
    if (!kept) return undefined;
    if (this.now() < kept.until) return kept.view;
    this.#pages.get(envId)!.delete(key);
    return undefined;
  }

  put(envId: string, key: string, view: CachedView): void {
    if (this.ttlMs <= 0) return;
    const pages = this.#pages.get(envId) ?? new Map<string, { view: CachedView; until: number }>();
    pages.set(key, { view, until: this.now() + this.ttlMs });
    this.#pages.set(envId, pages);
  }

  /** Forgets every page of the environment (the clear's operation completing). */
  clear(envId: string): void {
    this.#pages.delete(envId);
  }

  /** A manual clear asked now: 0 when it may go (and it counts from now), else the ms until one may. */
  askClear(envId: string): number {
    const now = this.now();
    const last = this.#lastClear.get(envId);
    if (last !== undefined && now - last < this.clearGapMs) return this.clearGapMs - (now - last);
    this.#lastClear.set(envId, now);
    return 0;
  }
}
