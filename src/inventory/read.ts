import type { SiteDomain, Theme } from '../api/types.js';
import { foldThemes, type Inventory } from './inventory.js';

/** The reads the inventory needs; the runner passes rate-limited, retried versions of these. */
export interface InventoryReader {
  listThemes(company: string, query: { offset: number; limit: number }): Promise<{ company: { themes: { total: number; last_updated_at: string; items: Theme[] } } }>;
  listDomains(envId: string): Promise<{ environment: { site_domains: SiteDomain[] } }>;
}

/** Anything that can make a read call: the runner's rate-limited, retrying Caller. */
export interface ReadCaller {
  read<T>(endpoint: 'listThemes' | 'listDomains', params: Record<string, string>, body?: unknown): Promise<T>;
}

export function inventoryReader(caller: ReadCaller): InventoryReader {
  return {
    listThemes: (company, query) => caller.read('listThemes', { id: company }, query),
    listDomains: (envId) => caller.read('listDomains', { env_id: envId }),
  };
}

/**
 * Pages through the theme listing until `total` themes are read. A page may hold fewer themes than
 * asked (the server caps pages), so the offset advances by what came back, never by the limit; an
 * empty page before `total` ends the reading rather than looping forever.
 */
export async function readInventory(reader: InventoryReader, company: string, pageSize = 100): Promise<Inventory> {
  const themes: Theme[] = [];
  let total = Infinity;
  let lastUpdatedAt: string | undefined;
  while (themes.length < total) {
    const page = await reader.listThemes(company, { offset: themes.length, limit: pageSize });
    const listing = page.company.themes;
    total = listing.total;
    lastUpdatedAt ??= listing.last_updated_at;
    if (listing.items.length === 0) break;
    themes.push(...listing.items);
  }
  return foldThemes(company, themes, lastUpdatedAt);
}

/** Adds the domains of the given environments to the inventory (one read each, in parallel as allowed). */
export async function readDomains(reader: InventoryReader, inventory: Inventory, envIds: string[]): Promise<void> {
  const domains: Record<string, SiteDomain[]> = { ...inventory.domains };
  await Promise.all(
    envIds
      .filter((id) => !domains[id])
      .map(async (id) => {
        domains[id] = (await reader.listDomains(id)).environment.site_domains;
      }),
  );
  inventory.domains = domains;
}
