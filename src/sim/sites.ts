import { UsageError } from '../errors.js';
import { databaseUpdateRequired } from './after-update.js';
import { catalogOf, installedOf, ITEM_KINDS, latestOf, type Fleet, type ItemKind, type SimDomain, type SimEnvironment } from './fleet.js';
import type { CachedView, PageCache } from './page-cache.js';
import { lookedPage, type SiteLook } from './site-look.js';

/**
 * The simulator also serves the fleet's sites: `GET /sites/{domain}/…` answers the front page of the
 * environment that owns the domain. These are the sites' own pages, not the API: no token, no rate
 * window, and a log of their own, so a test can prove health checks never reach the API.
 *
 * A page is broken (HTTP 500 with WordPress's critical-error page, as WordPress 5.2+ shows it) when
 * the environment has a theme installed at a version named by `--break-theme NAME@VERSION`, or a
 * plugin installed and active at a version named by `--break-plugin NAME@VERSION` (an inactive
 * plugin's code does not run), or WordPress at a release named by `--break-core VERSION`, or when its domain was broken outright (a site that is down whatever
 * sitefleet does).
 */
export interface SiteBreaks {
  /** `name@version`, the version resolved (`@latest` is the catalogue's newest at start). */
  themes: Set<string>;
  /** `name@version` of plugins that break a site where they are active. */
  plugins?: Set<string>;
  /** WordPress releases that break every site running them (before any theme or plugin loads). */
  core?: Set<string>;
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
  /** The environment that served it (unknown domains have none). */
  env?: SimEnvironment;
  /** What stopped the page with a fatal error, for the error log. */
  brokenBy?: Culprit;
}

/** What a fatal error comes from: a theme or plugin by its slug, or WordPress core by its release. */
export interface Culprit {
  kind: ItemKind | 'core';
  name: string;
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

/** `NAME@VERSION` or `NAME@latest` of a kind's item, checked against its catalogue. */
export function parseItemBreak(fleet: Fleet, kind: ItemKind, text: string): string {
  const flag = `--break-${kind}`;
  const m = /^([a-z0-9][a-z0-9_-]*)@([A-Za-z0-9._-]+)$/.exec(text.trim());
  const example = kind === 'theme' ? 'astra@latest' : 'akismet@latest';
  if (!m) throw new UsageError(`${flag} ${JSON.stringify(text)}: expected NAME@VERSION or NAME@latest, e.g. ${example}`);
  const catalog = catalogOf(fleet, kind);
  const item = catalog.get(m[1]!);
  if (!item) throw new UsageError(`${flag} ${text}: no ${kind} ${m[1]} in the catalogue (${[...catalog.keys()].join(', ')})`);
  const version = m[2] === 'latest' ? latestOf(item) : m[2]!;
  if (!item.versions.includes(version)) throw new UsageError(`${flag} ${text}: ${m[1]} has versions ${item.versions.join(', ')}`);
  return `${item.name}@${version}`;
}

export function parseThemeBreak(fleet: Fleet, text: string): string {
  return parseItemBreak(fleet, 'theme', text);
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

/** WordPress's wp-admin while its database is older than its files. */
export const DATABASE_UPDATE =
  '<h1>Database update required</h1><p>WordPress has been updated! Next and final step is to update your database to the newest version.</p>';

/** What `domain`'s front page answers now; through the environment's page cache when one is given. */
export function sitePage(fleet: Fleet, index: DomainIndex, breaks: SiteBreaks, domain: string, cache?: { pages: PageCache; path: string }): SitePage {
  const found = index.get(domain);
  const env = found ? fleet.environments.get(found.envId) : undefined;
  if (!found || !env) return { status: 404, html: '<h1>Not Found</h1>' };
  const key = `${found.name.toLowerCase()}${cache?.path ?? '/'}`;
  const kept = cache?.pages.get(env.id, key);
  const brokenBy = kept ? undefined : breaker(breaks, env);
  if (brokenBy) return { status: 500, html: page('WordPress › Error', CRITICAL_ERROR), env, brokenBy };
  // wp-admin of a site whose files moved past its database (after-update.ts): WordPress's own notice, never cached.
  if (cache?.path.startsWith('/wp-admin') && databaseUpdateRequired(env)) return { status: 200, html: page('WordPress › Update', DATABASE_UPDATE), env };
  const view = kept ?? originView(fleet, breaks, found, env);
  if (!view) return { status: 500, html: page('WordPress › Error', CRITICAL_ERROR), env };
  if (!kept) cache?.pages.put(env.id, key, view);
  const moving = found.name.toLowerCase();
  const { style, body } = lookedPage(escape(view.name), view.look, { slide: nextLoad(breaks.carousels, moving), wide: nextLoad(breaks.sliders, moving) });
  return { status: 200, html: page(view.name, body, style), env, ...(kept ? { cached: true as const } : {}) };
}

/** The WordPress release, theme or active plugin whose version is broken, if the environment runs one. */
function breaker(breaks: SiteBreaks, env: SimEnvironment): Culprit | undefined {
  if (env.wordpressVersion !== null && breaks.core?.has(env.wordpressVersion)) return { kind: 'core', name: env.wordpressVersion };
  for (const kind of ITEM_KINDS) {
    const broken = kind === 'theme' ? breaks.themes : breaks.plugins;
    if (!broken?.size) continue;
    // An inactive plugin's code does not run; the simulator keeps breaking on any installed theme, as it always did.
    for (const [name, item] of installedOf(env, kind)) {
      if ((kind === 'theme' || item.status === 'active') && broken.has(`${name}@${item.version}`)) return { kind, name };
    }
  }
  return undefined;
}

/** What the site itself serves, past any cache: its name and look, or undefined when its domain is broken. */
function originView(fleet: Fleet, breaks: SiteBreaks, found: SimDomain, env: SimEnvironment): CachedView | undefined {
  if (breaks.domains.has(found.name.toLowerCase())) return undefined;
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
