import type { Backup, EnvironmentPlugin, ListedItem, SiteDomain, SiteDomainAnswer, SiteListResponse } from '../api/types.js';
import { HttpError, SitefleetError } from '../errors.js';
import type { ReadAnswers } from '../api/endpoints.js';
import { foldItems, foldThemes, installedFromEnvironment, sortedEnvironments, versionItem, type Environment, type Inventory } from './inventory.js';
import { orderVersions, versionParts } from '../util/item-version.js';
import { KIND_TABLE, type Kind, BASE_KIND } from './kinds.js';

/** One page of a kind's company listing, whichever kind. */
export interface ListingPage {
  total: number;
  last_updated_at?: string | null;
  items: ListedItem<{ id?: string | null; site_display_name: string; display_name: string } & Record<string, unknown>>[];
}

/** The reads the inventory needs; the runner passes rate-limited, retried versions of these. */
export interface InventoryReader {
  /** `inQuery`: send offset and limit in the query string too (for a listing whose GET body is dropped). */
  listItems(kind: Kind, company: string, query: { offset: number; limit: number; search?: string }, inQuery?: boolean): Promise<ListingPage>;
  /** An environment's own listing of a kind that has one (`KindRow.environmentListing`). */
  listEnvironmentItems(kind: Kind, envId: string): Promise<EnvironmentPlugin[]>;
  /** The site listing's environments, each with its site's display name and the WordPress it runs (one read for the fleet). */
  listSiteEnvironments(company: string): Promise<SiteEnvironment[]>;
  listDomains(envId: string): Promise<{ environment: { site_domains: SiteDomainAnswer[] } }>;
  listBackups(envId: string): Promise<{ environment: { backups: Backup[] } }>;
}

type Reads = 'listThemes' | 'listPlugins' | 'listEnvironmentPlugins' | 'listDomains' | 'listBackups' | 'listSites';

/** An environment of the site listing, with its site's display name. */
export type SiteEnvironment = NonNullable<SiteListResponse['company']['sites'][number]['environments']>[number] & { site: string };

/** Anything that can make a read call: the runner's rate-limited, retrying Caller. */
export interface ReadCaller {
  read<N extends Reads>(
    endpoint: N,
    params: Record<string, string>,
    body?: unknown,
    options?: { query?: Record<string, string | number>; priority?: number },
  ): Promise<ReadAnswers[N]>;
}

/** `priority`: the caller's priority for these reads (a run confirming operations reads at poll priority). */
export function inventoryReader(caller: ReadCaller, priority?: number): InventoryReader {
  const extra = priority === undefined ? {} : { priority };
  return {
    async listItems(kind, company, query, inQuery) {
      const options = inQuery ? { query, ...extra } : extra;
      const listing = KIND_TABLE[kind].listing;
      if (listing === 'listSites') throw new Error(`the ${kind} listing is the site listing: read it with listSiteEnvironments`);
      const answer = await caller.read(listing, { id: company }, query, options);
      return 'themes' in answer.company ? answer.company.themes : answer.company.plugins;
    },
    async listSiteEnvironments(company) {
      const answer = await caller.read('listSites', {}, undefined, { query: { company, include_environments: 'true' }, ...extra });
      return answer.company.sites.flatMap((site) => (site.environments ?? []).map((env) => ({ ...env, site: site.display_name })));
    },
    async listEnvironmentItems(kind, envId) {
      const endpoint = KIND_TABLE[kind].environmentListing;
      if (!endpoint) throw new Error(`no environment listing of ${KIND_TABLE[kind].plural}`);
      return (await caller.read(endpoint, { env_id: envId }, undefined, extra)).environment.plugins.items;
    },
    listDomains: (envId) => caller.read('listDomains', { env_id: envId }),
    listBackups: (envId) => caller.read('listBackups', { env_id: envId }),
  };
}

/** The listing cannot be read whole: planning from part of the fleet would skip the rest silently. */
export class IncompleteListingError extends SitefleetError {
  override name = 'IncompleteListingError';
}

/**
 * Pages through a kind's company listing until `total` items are read, and proves every page moved on.
 *
 * A page may hold fewer items than asked (the server caps pages), so the offset advances by what
 * came back, never by the limit. A page made only of items already read means the paging is being
 * ignored: the spec sends offset and limit in a GET body, which some proxies drop, and then every
 * page is the first one again. The page is asked again with the parameters in the query string as
 * well; if the listing still does not move, or ends (an empty page) before `total`, reading stops
 * with an error instead of planning from part of the fleet.
 */
export async function readListing(
  reader: InventoryReader,
  kind: Kind,
  company: string,
  pageSize = 100,
  filter: { search?: string } = {},
): Promise<{ items: ListingPage['items']; lastUpdatedAt?: string }> {
  const items: ListingPage['items'] = [];
  const seen = new Set<string>();
  const plural = KIND_TABLE[kind].plural;
  let total = Infinity;
  let offset = 0;
  let lastUpdatedAt: string | undefined;
  let inQuery = false;
  while (seen.size < total) {
    const listing = await reader.listItems(kind, company, { offset, limit: pageSize, ...filter }, inQuery);
    total = listing.total;
    lastUpdatedAt ??= listing.last_updated_at ?? undefined;
    if (listing.items.length === 0) {
      if (seen.size >= total) break;
      throw new IncompleteListingError(
        `the ${kind} listing ended at ${seen.size} of its ${total} ${plural} (an empty page at offset ${offset}); nothing was planned from part of the fleet`,
      );
    }
    const fresh = listing.items.filter((t) => !seen.has(t.name));
    if (fresh.length === 0) {
      if (!inQuery) {
        inQuery = true;
        continue;
      }
      throw new IncompleteListingError(
        `the ${kind} listing does not page: offset ${offset} answered ${plural} already read, with offset and limit in the body and in the query string (read ${seen.size} of ${total}); nothing was planned from part of the fleet`,
      );
    }
    for (const t of fresh) seen.add(t.name);
    items.push(...fresh);
    offset += listing.items.length;
  }
  return { items, ...(lastUpdatedAt ? { lastUpdatedAt } : {}) };
}

/** The theme listing read whole and folded: the inventory every plan starts from. */
export async function readInventory(reader: InventoryReader, company: string, pageSize = 100, filter: { search?: string } = {}): Promise<Inventory> {
  const { items, lastUpdatedAt } = await readListing(reader, BASE_KIND, company, pageSize, filter);
  return foldThemes(company, items, lastUpdatedAt);
}

/**
 * Adds a kind's company listing to the inventory. Where it cannot be used, nothing of it is kept and
 * the inventory says why (`listed[kind].from_environments`): the service does not serve it (404), or
 * its entries name no environment id (the vendor's sample shows none), so an entry cannot be told from
 * another environment of the same names. The caller then reads each selected environment's own
 * listing (`readEnvironmentItems`).
 */
export async function readKind(reader: InventoryReader, inventory: Inventory, kind: Kind, pageSize = 100, filter: { search?: string } = {}): Promise<void> {
  if (KIND_TABLE[kind].listing === 'listSites') return readVersions(reader, inventory, kind);
  let read: Awaited<ReturnType<typeof readListing>>;
  try {
    read = await readListing(reader, kind, inventory.company, pageSize, filter);
  } catch (error) {
    if (!isNotFound(error) || !KIND_TABLE[kind].environmentListing) throw error;
    inventory.listed[kind] = { count: 0, from_environments: `the service does not serve the company ${kind} listing (${KIND_TABLE[kind].plural}: 404)` };
    return;
  }
  const byId = new Map(inventory.environments.map((e) => [e.id, e]));
  const probe = new Map<string, Environment>();
  const { unnamed } = foldItems(kind, read.items, probe);
  if (unnamed > 0 && KIND_TABLE[kind].environmentListing) {
    inventory.listed[kind] = {
      count: 0,
      from_environments: `the company ${kind} listing names no environment id for ${unnamed} of its entries`,
    };
    return;
  }
  for (const [id, env] of probe) {
    const known = byId.get(id);
    if (known) known.items[kind] = env.items[kind];
    else byId.set(id, env);
  }
  inventory.environments = sortedEnvironments(byId);
  inventory.listed[kind] = { count: read.items.length, ...(read.lastUpdatedAt ? { last_updated_at: read.lastUpdatedAt } : {}) };
}

/**
 * A kind of one item whose version the site listing shows (WordPress): one read for the fleet. What
 * each environment is offered is every newer numbered version the fleet runs (`offers`); a task
 * chooses among them and the versions it names. An environment whose version the listing leaves
 * out (null) has none: nothing is judged or sent for it.
 */
async function readVersions(reader: InventoryReader, inventory: Inventory, kind: Kind): Promise<void> {
  let listed: SiteEnvironment[];
  try {
    listed = await reader.listSiteEnvironments(inventory.company);
  } catch (error) {
    if (!isNotFound(error)) throw error;
    inventory.listed[kind] = { count: 0, unavailable: `the service serves no site listing (GET /sites answered 404), the one place the ${kind} version shows` };
    return;
  }
  const byId = new Map(inventory.environments.map((e) => [e.id, e]));
  // A numbered version is taken as its digits alone: versionParts reads `7.0.0\n` as numbered (it
  // trims), and the raw text, offered to another environment, would reach `wp core update --version=`
  // with its newline, and a read-back (which reads the command) would find nothing to compare.
  const versionOf = (v: string | null | undefined) => (typeof v === 'string' && versionParts(v) ? v.trim() : v);
  const known = [...new Set(listed.flatMap((e) => (versionParts(versionOf(e.wordpress_version) ?? '') ? [versionOf(e.wordpress_version)!] : [])))];
  const newestFirst = known.sort((a, b) => orderVersions(b, a)!);
  for (const entry of listed) {
    const version = versionOf(entry.wordpress_version);
    if (typeof version !== 'string' || version === '') continue;
    let env = byId.get(entry.id);
    if (!env) {
      env = { id: entry.id, site: entry.site, name: entry.display_name ?? entry.name ?? '', items: {} };
      byId.set(entry.id, env);
    }
    const offers = newestFirst.filter((v) => (orderVersions(v, version) ?? 0) > 0);
    env.items[kind] = [versionItem(kind, KIND_TABLE[kind].only!, version, offers)];
  }
  inventory.environments = sortedEnvironments(byId);
  // A listing that shows no version at all (the spec's site listing has no such field) could not be
  // looked at: unknown, never "none exposed" nor "no update available" (exposure's `unchecked`, a refused plan).
  if (listed.length > 0 && listed.every((e) => typeof e.wordpress_version !== 'string' || e.wordpress_version === '')) {
    inventory.listed[kind] = { count: 0, unavailable: `the site listing shows no WordPress version for any of its ${listed.length} environments` };
    return;
  }
  inventory.listed[kind] = { count: known.length > 0 ? 1 : 0 };
}

/** Whether a read failed because the service has no such route (an HTTP 404 for the listing itself). */
function isNotFound(error: unknown): boolean {
  return error instanceof HttpError && error.status === 404;
}

/**
 * Reads each given environment's own listing of a kind (where the company one could not be used),
 * all at once through the caller's budget, and sets what they list.
 */
export async function readEnvironmentItems(reader: InventoryReader, inventory: Inventory, kind: Kind, envIds: string[], onRead?: () => void): Promise<void> {
  const byId = new Map(inventory.environments.map((e) => [e.id, e]));
  const lists = await readEach(envIds, undefined, (id) => reader.listEnvironmentItems(kind, id), onRead);
  for (const [id, list] of Object.entries(lists)) {
    const env = byId.get(id);
    if (env) env.items[kind] = list.map((p) => installedFromEnvironment(kind, p)).sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  }
  const listed = inventory.listed[kind] ?? { count: 0 };
  listed.count = new Set(inventory.environments.flatMap((e) => (e.items[kind] ?? []).map((i) => i.name))).size;
  inventory.listed[kind] = listed;
}

/**
 * One read per environment not read yet, all started at once: the Caller's rate budget and bound on
 * calls in flight decide the pace. Returns the known entries with the new ones added.
 */
async function readEach<T>(
  envIds: string[],
  known: Record<string, T> | undefined,
  read: (id: string) => Promise<T>,
  onRead?: () => void,
): Promise<Record<string, T>> {
  const all: Record<string, T> = { ...known };
  await Promise.all(
    envIds
      .filter((id) => !(id in all))
      .map(async (id) => {
        all[id] = await read(id);
        onRead?.();
      }),
  );
  return all;
}

/** The spec's name for the provider-DNS flag, or the vendor document's (the schema made sure one is there). */
function domain(d: SiteDomainAnswer): SiteDomain {
  return { id: d.id, name: d.name, uses_provider_dns: d.uses_provider_dns ?? d.uses_cloudflare_dns === true };
}

/** Adds the domains of the given environments to the inventory (for domain-scoped tasks). */
export async function readDomains(reader: InventoryReader, inventory: Inventory, envIds: string[]): Promise<void> {
  inventory.domains = await readEach(envIds, inventory.domains, async (id) => (await reader.listDomains(id)).environment.site_domains.map(domain));
}

/** Adds the backups of the given environments to the inventory (`unless_exists`, `sitefleet backups`). */
export async function readBackups(reader: InventoryReader, inventory: Inventory, envIds: string[], onRead?: () => void): Promise<void> {
  inventory.backups = await readEach(envIds, inventory.backups, async (id) => (await reader.listBackups(id)).environment.backups, onRead);
}
