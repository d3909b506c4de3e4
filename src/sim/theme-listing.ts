import type { Theme, ThemeEnvironment, ThemeListQuery, ThemeListResponse } from '../api/types.js';
import type { CatalogTheme, Fleet, InstalledTheme, SimEnvironment } from './fleet.js';

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

function entry(theme: CatalogTheme, env: SimEnvironment, siteName: string, installed: InstalledTheme): ThemeEnvironment {
  const latest = theme.versions.at(-1)!;
  // A version that does not compare (`1.0-beta`) is behind any other latest: the service offers the update.
  const behind = installed.version !== latest && !(compareVersions(installed.version, latest) >= 0);
  return {
    id: env.id,
    site_display_name: siteName,
    display_name: env.displayName,
    theme_status: installed.status,
    theme_update: behind ? 'available' : 'none',
    theme_version: installed.version,
    is_theme_version_vulnerable: theme.vulnerable.has(installed.version),
    theme_update_version: behind ? latest : '',
    is_theme_update_version_vulnerable: behind && theme.vulnerable.has(latest),
    theme_update_status: installed.updateStatus,
    auto_update_type: installed.autoUpdateType,
  };
}

/**
 * `GET /company/{id}/wp-themes`: themes in name order, each with the environments it is installed on.
 * `search` matches name or title; `status` keeps environments where the theme has that status;
 * `column: updatesAvailable` keeps environments with an update available. Pages are of themes, and a
 * page never holds more than `maxPageSize` of them, whatever `limit` asks.
 */
export function listThemes(fleet: Fleet, query: ThemeListQuery, maxPageSize: number): ThemeListResponse {
  const byTheme = new Map<string, ThemeEnvironment[]>();
  const search = query.search?.toLowerCase();
  for (const theme of fleet.catalog.values()) {
    if (search && !theme.name.includes(search) && !theme.title.toLowerCase().includes(search)) continue;
    byTheme.set(theme.name, []);
  }
  for (const env of fleet.environments.values()) {
    const siteName = fleet.sites.get(env.siteId)!.displayName;
    for (const [name, installed] of env.themes) {
      const list = byTheme.get(name);
      if (!list) continue;
      const e = entry(fleet.catalog.get(name)!, env, siteName, installed);
      if (query.status && e.theme_status !== query.status) continue;
      if (query.column === 'updatesAvailable' && e.theme_update !== 'available') continue;
      list.push(e);
    }
  }
  const filtering = Boolean(query.status || query.column);
  const themes: Theme[] = [];
  for (const [name, environments] of [...byTheme].sort(([a], [b]) => a.localeCompare(b))) {
    if (filtering && environments.length === 0) continue;
    const theme = fleet.catalog.get(name)!;
    themes.push({
      name,
      title: theme.title,
      description: theme.description,
      latest_version: theme.versions.at(-1)!,
      is_latest_version_vulnerable: theme.vulnerable.has(theme.versions.at(-1)!),
      environment_count: environments.length,
      update_count: environments.filter((e) => e.theme_update === 'available').length,
      environments,
    });
  }
  const offset = query.offset ?? 0;
  const limit = Math.min(query.limit ?? 20, maxPageSize);
  return {
    company: { themes: { total: themes.length, last_updated_at: new Date(fleet.lastUpdatedAt).toISOString(), items: themes.slice(offset, offset + limit) } },
  };
}
