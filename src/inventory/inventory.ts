import type { Backup, SiteDomain, Theme, ThemeEnvironment } from '../api/types.js';

/** A theme as installed on one environment, from the theme listing. */
export interface InstalledTheme {
  name: string;
  status: string;
  version: string;
  version_vulnerable: boolean;
  update_available: boolean;
  update_version: string;
  update_vulnerable: boolean;
  update_status: string;
  auto_update_type: string;
}

export interface Environment {
  id: string;
  site: string;
  /** From a sites map (`sites:` or `--sites`); the listing has none. */
  site_id?: string;
  name: string;
  themes: InstalledTheme[];
}

/**
 * The fleet as the API shows it. The theme listing is the only inventory there is, so an environment
 * with no theme (a plain one) is not in it. Domains are read only when a task needs them.
 */
export interface Inventory {
  company: string;
  /** Sorted by site, then environment name, then id: the plan's order does not depend on the listing's. */
  environments: Environment[];
  theme_count: number;
  last_updated_at?: string;
  /** env id → its domains, for the environments a domain-scoped task selected. */
  domains?: Record<string, SiteDomain[]>;
  /** env id → its backups, for the environments of tasks whose action reads them first (`reads`). */
  backups?: Record<string, Backup[]>;
}

/** An absent or null field is "not given": no update, not vulnerable, no status. */
function installed(theme: Theme, e: ThemeEnvironment): InstalledTheme {
  return {
    name: theme.name,
    status: e.theme_status ?? '',
    version: e.theme_version,
    version_vulnerable: e.is_theme_version_vulnerable ?? false,
    update_available: e.theme_update === 'available',
    update_version: e.theme_update_version ?? '',
    update_vulnerable: e.is_theme_update_version_vulnerable ?? false,
    update_status: e.theme_update_status ?? '',
    auto_update_type: e.auto_update_type ?? '',
  };
}

/** Folds theme-major pages into environment-major records, each theme listed once per environment. */
export function foldThemes(company: string, themes: Theme[], lastUpdatedAt?: string): Inventory {
  const byId = new Map<string, Environment>();
  for (const theme of themes) {
    for (const e of theme.environments ?? []) {
      let env = byId.get(e.id);
      if (!env) {
        env = { id: e.id, site: e.site_display_name, name: e.display_name, themes: [] };
        byId.set(e.id, env);
      }
      if (!env.themes.some((t) => t.name === theme.name)) env.themes.push(installed(theme, e));
    }
  }
  const environments = [...byId.values()];
  for (const env of environments) env.themes.sort((a, b) => cmp(a.name, b.name));
  environments.sort((a, b) => cmp(a.site, b.site) || cmp(a.name, b.name) || cmp(a.id, b.id));
  return { company, environments, theme_count: themes.length, last_updated_at: lastUpdatedAt };
}

function cmp(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
