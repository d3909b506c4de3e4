import type { Backup, SiteDomain, SiteDomainAnswer, Theme } from '../api/types.js';
import { SitefleetError } from '../errors.js';
import type { ReadAnswers } from '../api/endpoints.js';
import { foldThemes, type Inventory } from './inventory.js';

/** The reads the inventory needs; the runner passes rate-limited, retried versions of these. */
export interface InventoryReader {
  /** `inQuery`: send offset and limit in the query string too (for a listing whose GET body is dropped). */
  listThemes(
    company: string,
    query: { offset: number; limit: number; search?: string },
    inQuery?: boolean,
  ): Promise<{ company: { themes: { total: number; last_updated_at: string; items: Theme[] } } }>;
  listDomains(envId: string): Promise<{ environment: { site_domains: SiteDomainAnswer[] } }>;
  listBackups(envId: string): Promise<{ environment: { backups: Backup[] } }>;
}

/** Anything that can make a read call: the runner's rate-limited, retrying Caller. */
export interface ReadCaller {
  read<N extends 'listThemes' | 'listDomains' | 'listBackups' | 'listSites'>(
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
    listThemes: (company, query, inQuery) => caller.read('listThemes', { id: company }, query, inQuery ? { query, ...extra } : extra),
    listDomains: (envId) => caller.read('listDomains', { env_id: envId }),
    listBackups: (envId) => caller.read('listBackups', { env_id: envId }),
  };
}

/** The listing cannot be read whole: planning from part of the fleet would skip the rest silently. */
export class IncompleteListingError extends SitefleetError {
  override name = 'IncompleteListingError';
}

/**
 * Pages through the theme listing until `total` themes are read, and proves every page moved on.
 *
 * A page may hold fewer themes than asked (the server caps pages), so the offset advances by what
 * came back, never by the limit. A page made only of themes already read means the paging is being
 * ignored: the spec sends offset and limit in a GET body, which some proxies drop, and then every
 * page is the first one again. The page is asked again with the parameters in the query string as
 * well; if the listing still does not move, or ends (an empty page) before `total`, reading stops
 * with an error instead of planning from part of the fleet.
 */
export async function readInventory(reader: InventoryReader, company: string, pageSize = 100, filter: { search?: string } = {}): Promise<Inventory> {
  const themes: Theme[] = [];
  const seen = new Set<string>();
  let total = Infinity;
  let offset = 0;
  let lastUpdatedAt: string | undefined;
  let inQuery = false;
  while (seen.size < total) {
    const page = await reader.listThemes(company, { offset, limit: pageSize, ...filter }, inQuery);
    const listing = page.company.themes;
    total = listing.total;
    lastUpdatedAt ??= listing.last_updated_at;
    if (listing.items.length === 0) {
      if (seen.size >= total) break;
      throw new IncompleteListingError(
        `the theme listing ended at ${seen.size} of its ${total} themes (an empty page at offset ${offset}); nothing was planned from part of the fleet`,
      );
    }
    const fresh = listing.items.filter((t) => !seen.has(t.name));
    if (fresh.length === 0) {
      if (!inQuery) {
        inQuery = true;
        continue;
      }
      throw new IncompleteListingError(
        `the theme listing does not page: offset ${offset} answered themes already read, with offset and limit in the body and in the query string (read ${seen.size} of ${total}); nothing was planned from part of the fleet`,
      );
    }
    for (const t of fresh) seen.add(t.name);
    themes.push(...fresh);
    offset += listing.items.length;
  }
  return foldThemes(company, themes, lastUpdatedAt);
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
