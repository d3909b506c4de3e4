import { UsageError } from '../errors.js';
import type { Fleet, SimDomain, SimEnvironment } from './fleet.js';
import type { CachedView, PageCache } from './page-cache.js';
import { lookedPage, type SiteLook } from './site-look.js';

/**
 * The simulator also serves the fleet's sites: `GET /sites/{domain}/…` answers the front page of the
 * environment that owns the domain. These are the sites' own pages, not the API: no token, no rate
 * window, and a log of their own, so a test can prove health checks never reach the API.
 *
 * A page is broken (HTTP 500 with WordPress's critical-error page, as WordPress 5.2+ shows it) when
 * the environment has a theme installed at a version named by `--break-theme NAME@VERSION`, or when
 * its domain was broken outright (a site that is down whatever sitefleet does).
 */
export interface SiteBreaks {
  /** `name@version`, the version resolved (`@latest` is the catalogue's newest at start). */
  themes: Set<string>;
  /** Domain names that answer broken whatever the environment runs. */
  domains: Set<string>;
  /** `name@version` → how a site with that theme version looks (site-look.ts). */
  looks?: Map<string, SiteLook>;
  /** Domain names whose front page has a carousel, and how many times each was loaded (its slide). */
  carousels?: Map<string, number>;
  /** Domain names whose front page has a wide slider (the whole hero), and how many times each was loaded. */
  sliders?: Map<string, number>;
}

export interface SitePage {
  status: number;
  html: string;
  /** Served from the environment's page cache, not by the site. */
  cached?: true;
}

export interface SiteLogEntry {
  /** ms since the simulator started */
  at: number;
  domain: string;
  status: number;
  /** Served from the environment's page cache (page-cache.ts), not by the site. */
  cached?: true;
}

/** The text WordPress shows when a fatal error stops a page (since 5.2). */
const CRITICAL_ERROR =
  '<p>There has been a critical error on this website.</p><p><a href="https://wordpress.org/documentation/article/faq-troubleshooting/">Learn more about troubleshooting WordPress.</a></p>';

/** `NAME@VERSION` or `NAME@latest`, checked against the catalogue. */
export function parseThemeBreak(fleet: Fleet, text: string): string {
  const m = /^([a-z0-9][a-z0-9_-]*)@([A-Za-z0-9._-]+)$/.exec(text.trim());
  if (!m) throw new UsageError(`--break-theme ${JSON.stringify(text)}: expected NAME@VERSION or NAME@latest, e.g. astra@latest`);
  const theme = fleet.catalog.get(m[1]!);
  if (!theme) throw new UsageError(`--break-theme ${text}: no theme ${m[1]} in the catalogue (${[...fleet.catalog.keys()].join(', ')})`);
  const version = m[2] === 'latest' ? theme.versions.at(-1)! : m[2]!;
  if (!theme.versions.includes(version)) throw new UsageError(`--break-theme ${text}: ${m[1]} has versions ${theme.versions.join(', ')}`);
  return `${theme.name}@${version}`;
}

/** Looks domains up by name; rebuilt when the fleet gains one (domains.add). */
export class DomainIndex {
  #byName = new Map<string, SimDomain>();
  #size = -1;

  constructor(private readonly fleet: Fleet) {}

  get(name: string): SimDomain | undefined {
    if (this.#size !== this.fleet.domains.size) {
      this.#byName = new Map([...this.fleet.domains.values()].map((d) => [d.name.toLowerCase(), d]));
      this.#size = this.fleet.domains.size;
    }
    return this.#byName.get(name.toLowerCase());
  }
}

/** What `domain`'s front page answers now; through the environment's page cache when one is given. */
export function sitePage(fleet: Fleet, index: DomainIndex, breaks: SiteBreaks, domain: string, cache?: { pages: PageCache; path: string }): SitePage {
  const found = index.get(domain);
  const env = found ? fleet.environments.get(found.envId) : undefined;
  if (!found || !env) return { status: 404, html: '<h1>Not Found</h1>' };
  const key = `${found.name.toLowerCase()}${cache?.path ?? '/'}`;
  const kept = cache?.pages.get(env.id, key);
  const view = kept ?? originView(fleet, breaks, found, env);
  if (!view) return { status: 500, html: page('WordPress › Error', CRITICAL_ERROR) };
  if (!kept) cache?.pages.put(env.id, key, view);
  const moving = found.name.toLowerCase();
  const { style, body } = lookedPage(escape(view.name), view.look, { slide: nextLoad(breaks.carousels, moving), wide: nextLoad(breaks.sliders, moving) });
  return { status: 200, html: page(view.name, body, style), ...(kept ? { cached: true as const } : {}) };
}

/** What the site itself serves, past any cache: its name and look, or undefined when it is broken. */
function originView(fleet: Fleet, breaks: SiteBreaks, found: SimDomain, env: SimEnvironment): CachedView | undefined {
  const broken = breaks.domains.has(found.name.toLowerCase()) || themesOf(env).some((t) => breaks.themes.has(t));
  if (broken) return undefined;
  const name = fleet.sites.get(env.siteId)?.displayName ?? found.name;
  const look = themesOf(env)
    .map((t) => breaks.looks?.get(t))
    .find(Boolean);
  return { name, ...(look ? { look } : {}) };
}

/** How many times a moving part was loaded before (its slide), counted up; undefined when the site has none. */
function nextLoad(loads: Map<string, number> | undefined, key: string): number | undefined {
  const n = loads?.get(key);
  if (n !== undefined) loads!.set(key, n + 1);
  return n;
}

function themesOf(env: SimEnvironment): string[] {
  return [...env.themes].map(([name, t]) => `${name}@${t.version}`);
}

function page(title: string, body: string, style = ''): string {
  return `<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>${escape(title)}</title>${style ? `<style>${style}</style>` : ''}</head><body>${body}</body></html>`;
}

function escape(text: string): string {
  return text.replace(/[&<>"]/g, (c) => `&#${c.charCodeAt(0)};`);
}
