import type { ThemeListQuery } from '../api/types.js';
import { catalogOf, installedOf, latestOf, type CatalogItem, type Fleet, type InstalledItem, type ItemKind, type SimEnvironment } from './fleet.js';

/** Numeric comparison of dotted versions: 1.10.0 > 1.9.3. */
export function compareVersions(a: string, b: string): number {
  const pa = a.split('.').map(Number);
  const pb = b.split('.').map(Number);
  for (let i = 0; i < Math.max(pa.length, pb.length); i++) {
    const d = (pa[i] ?? 0) - (pb[i] ?? 0);
    if (d !== 0) return d;
  }
  return 0;
}

/** Whether the service offers an update: a version that does not compare (`1.0-beta`) is behind any other latest. */
function behind(version: string, latest: string): boolean {
  return version !== latest && !(compareVersions(version, latest) >= 0);
}

/** How a company listing sees the installed items: the lag's older state (listing-lag.ts) or now, with or without environment ids. */
export interface ListingView {
  installed(env: SimEnvironment): Map<string, InstalledItem>;
  /** False: entries without the environment's `id`, as the vendor's changelog sample of the plugin listing. */
  withIds: boolean;
}

type Json = Record<string, unknown>;

/** The prefixed field names of a kind's listing entries (`theme_version`, `plugin_version`), made once a listing. */
function entryKeys(kind: ItemKind) {
  return {
    status: `${kind}_status`,
    update: `${kind}_update`,
    version: `${kind}_version`,
    versionVulnerable: `is_${kind}_version_vulnerable`,
    updateVersion: `${kind}_update_version`,
    updateVulnerable: `is_${kind}_update_version_vulnerable`,
    updateStatus: `${kind}_update_status`,
  };
}

/** One environment of a company listing, its fields prefixed by the kind. */
function entry(keys: ReturnType<typeof entryKeys>, item: CatalogItem, env: SimEnvironment, siteName: string, installed: InstalledItem, withId: boolean): Json {
  const latest = latestOf(item);
  const offered = behind(installed.version, latest);
  const e: Json = {};
  if (withId) e.id = env.id;
  e.site_display_name = siteName;
  e.display_name = env.displayName;
  e[keys.status] = installed.status;
  e[keys.update] = offered ? 'available' : 'none';
  e[keys.version] = installed.version;
  e[keys.versionVulnerable] = item.vulnerable.has(installed.version);
  e[keys.updateVersion] = offered ? latest : '';
  e[keys.updateVulnerable] = offered && item.vulnerable.has(latest);
  e[keys.updateStatus] = installed.updateStatus;
  e.auto_update_type = installed.autoUpdateType;
  return e;
}

type Installs = [SimEnvironment, InstalledItem][];

/** Each catalogue item `search` keeps, with the installs the filters keep, in name order. */
function installsByItem(fleet: Fleet, kind: ItemKind, query: ThemeListQuery, view: ListingView): [CatalogItem, Installs][] {
  const catalog = catalogOf(fleet, kind);
  const byItem = new Map<string, Installs>();
  const search = query.search?.toLowerCase();
  for (const item of catalog.values()) {
    if (search && !item.name.includes(search) && !item.title.toLowerCase().includes(search)) continue;
    byItem.set(item.name, []);
  }
  for (const env of fleet.environments.values()) {
    for (const [name, installed] of view.installed(env)) {
      const list = byItem.get(name);
      if (!list) continue;
      if (query.status && installed.status !== query.status) continue;
      if (query.column === 'updatesAvailable' && !behind(installed.version, latestOf(catalog.get(name)!))) continue;
      list.push([env, installed]);
    }
  }
  const filtering = Boolean(query.status || query.column);
  return [...byItem]
    .sort(([a], [b]) => a.localeCompare(b))
    .filter(([, installs]) => !filtering || installs.length > 0)
    .map(([name, installs]) => [catalog.get(name)!, installs]);
}

/**
 * `GET /company/{id}/wp-themes` and `GET /company/{id}/wp-plugins`: a kind's items in name order,
 * each with the environments it is installed on. `search` matches name or title; `status` keeps
 * environments where the item has that status; `column: updatesAvailable` keeps environments with an
 * update available. Pages are of items, and a page never holds more than `maxPageSize` of them,
 * whatever `limit` asks. Only the page's entries are built: a fleet of 50,000 installs pages fast.
 */
export function listItems(fleet: Fleet, kind: ItemKind, query: ThemeListQuery, maxPageSize: number, view?: ListingView): Json {
  const seen = view ?? { installed: (env: SimEnvironment) => installedOf(env, kind), withIds: true };
  const all = installsByItem(fleet, kind, query, seen);
  const offset = query.offset ?? 0;
  const limit = Math.min(query.limit ?? 20, maxPageSize);
  const keys = entryKeys(kind);
  const items = all.slice(offset, offset + limit).map(([item, installs]) => {
    const environments = installs.map(([env, installed]) => entry(keys, item, env, fleet.sites.get(env.siteId)!.displayName, installed, seen.withIds));
    const latest = latestOf(item);
    return {
      name: item.name,
      title: item.title,
      ...(item.description === undefined ? {} : { description: item.description }),
      latest_version: latest,
      is_latest_version_vulnerable: item.vulnerable.has(latest),
      environment_count: environments.length,
      update_count: environments.filter((e) => e[keys.update] === 'available').length,
      environments,
    };
  });
  return { company: { [`${kind}s`]: { total: all.length, last_updated_at: new Date(fleet.lastUpdatedAt).toISOString(), items } } };
}

/** `GET /sites/environments/{env_id}/wp-plugins`: what the environment runs now, in name order (never lagging). */
export function environmentItems(fleet: Fleet, env: SimEnvironment, kind: ItemKind): Json {
  const catalog = catalogOf(fleet, kind);
  const items = [...installedOf(env, kind)]
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([name, installed]) => {
      const item = catalog.get(name)!;
      const latest = latestOf(item);
      const offered = behind(installed.version, latest);
      return {
        name,
        title: item.title,
        status: installed.status,
        version: installed.version,
        update: offered ? 'available' : 'none',
        update_version: offered ? latest : null,
        update_status: installed.updateStatus,
        is_version_vulnerable: item.vulnerable.has(installed.version),
        is_update_version_vulnerable: offered && item.vulnerable.has(latest),
      };
    });
  return { environment: { id: env.id, [`${kind}s`]: { items } } };
}
