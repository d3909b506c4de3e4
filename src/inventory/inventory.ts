import type { Backup, EnvironmentPlugin, ListedItem, SiteDomain } from '../api/types.js';
import { type Kind, BASE_KIND } from './kinds.js';

/** An item (a theme, a plugin) as installed on one environment, from a listing. */
export interface InstalledItem {
  kind: Kind;
  name: string;
  status: string;
  version: string;
  version_vulnerable: boolean;
  update_available: boolean;
  update_version: string;
  update_vulnerable: boolean;
  update_status: string;
  auto_update_type: string;
  /**
   * A kind whose listing offers no version (WordPress): every newer version the fleet runs, newest
   * first. A task chooses its offer among them (actions/item-writes.ts), and `update_version` is the newest.
   */
  offers?: string[];
}

export interface Environment {
  id: string;
  site: string;
  /** From a sites map (`sites:` or `--sites`) or the site listing; the item listings have none. */
  site_id?: string;
  name: string;
  /** What is installed, by kind, each list by name; a kind not read is absent. */
  items: Partial<Record<Kind, InstalledItem[]>>;
}

/** What one kind's listing gave: how many items, as of when, and where they were read. */
export interface Listed {
  count: number;
  last_updated_at?: string;
  /**
   * Why the company listing could not be used (the service does not serve it, its entries name no
   * environment id): each selected environment's own listing was read instead, through the budget.
   */
  from_environments?: string;
  /** Why the kind could not be read at all (`inventory` shows the rest; a plan that needs the kind stops instead). */
  unavailable?: string;
}

/**
 * The fleet as the API shows it. The theme listing is the inventory of environments (an environment
 * with no theme, a plain one, is not in it); other kinds' listings add what is installed there, and
 * domains and backups are read only when a task needs them.
 */
export interface Inventory {
  company: string;
  /** Sorted by site, then environment name, then id: the plan's order does not depend on the listing's. */
  environments: Environment[];
  /** Per kind read. */
  listed: Partial<Record<Kind, Listed>>;
  /** The theme listing's own date (a plan names it). */
  last_updated_at?: string;
  /** env id → its domains, for the environments a domain-scoped task selected. */
  domains?: Record<string, SiteDomain[]>;
  /** env id → its backups, for the environments of tasks whose action reads them first (`reads`). */
  backups?: Record<string, Backup[]>;
}

/** The items of one kind on an environment (none when that kind was not read). */
export function installedOf(env: Environment, kind: Kind): InstalledItem[] {
  return env.items[kind] ?? [];
}

/** One environment entry of a company listing, its fields named with the kind's prefix (`theme_version`, `plugin_version`). */
type ListedEntry = { id?: string | null; site_display_name: string; display_name: string; auto_update_type?: string | null } & Record<string, unknown>;

const text = (v: unknown): string => (typeof v === 'string' ? v : '');
const flag = (v: unknown): boolean => v === true;

/** An absent or null field is "not given": no update, not vulnerable, no status. */
function installed(kind: Kind, name: string, e: ListedEntry): InstalledItem {
  const f = (field: string): unknown => e[`${kind}_${field}`];
  return {
    kind,
    name,
    status: text(f('status')),
    version: text(f('version')),
    version_vulnerable: flag(e[`is_${kind}_version_vulnerable`]),
    update_available: f('update') === 'available',
    update_version: text(f('update_version')),
    update_vulnerable: flag(e[`is_${kind}_update_version_vulnerable`]),
    update_status: text(f('update_status')),
    auto_update_type: text(e.auto_update_type),
  };
}

/** The one item of its kind an environment runs (WordPress), at `version`, offered `offers` (newest first). */
export function versionItem(kind: Kind, name: string, version: string, offers: string[]): InstalledItem {
  return {
    kind,
    name,
    status: 'active',
    version,
    version_vulnerable: false,
    update_available: offers.length > 0,
    update_version: offers[0] ?? '',
    update_vulnerable: false,
    update_status: '',
    auto_update_type: '',
    offers,
  };
}

/** An item of an environment's own listing (`GET …/wp-plugins`): unprefixed fields, the same meaning. */
export function installedFromEnvironment(kind: Kind, p: EnvironmentPlugin): InstalledItem {
  return {
    kind,
    name: p.name,
    status: p.status ?? '',
    version: p.version,
    version_vulnerable: p.is_version_vulnerable ?? false,
    update_available: p.update === 'available',
    update_version: p.update_version ?? '',
    update_vulnerable: p.is_update_version_vulnerable ?? false,
    update_status: p.update_status ?? '',
    auto_update_type: '',
  };
}

/**
 * Folds a kind's item-major pages into environment-major records, each item listed once per
 * environment, into `environments` (an environment the fold has not met is added). An entry with no
 * environment id is left out: the caller learns how many (`unnamed`) and reads those otherwise.
 */
export function foldItems(kind: Kind, items: ListedItem<ListedEntry>[], byId: Map<string, Environment>): { unnamed: number } {
  let unnamed = 0;
  for (const item of items) {
    for (const e of item.environments ?? []) {
      if (typeof e.id !== 'string' || e.id === '') {
        unnamed++;
        continue;
      }
      let env = byId.get(e.id);
      if (!env) {
        env = { id: e.id, site: e.site_display_name, name: e.display_name, items: {} };
        byId.set(e.id, env);
      }
      const list = (env.items[kind] ??= []);
      if (!list.some((t) => t.name === item.name)) list.push(installed(kind, item.name, e));
    }
  }
  return { unnamed };
}

/** The environments in the inventory's order, each kind's items by name. */
export function sortedEnvironments(byId: Map<string, Environment>): Environment[] {
  const environments = [...byId.values()];
  for (const env of environments) for (const list of Object.values(env.items)) list.sort((a, b) => cmp(a.name, b.name));
  return environments.sort((a, b) => cmp(a.site, b.site) || cmp(a.name, b.name) || cmp(a.id, b.id));
}

/** The theme listing folded into an inventory (the listing every plan starts from). */
export function foldThemes(company: string, themes: ListedItem<ListedEntry>[], lastUpdatedAt?: string): Inventory {
  const byId = new Map<string, Environment>();
  foldItems(BASE_KIND, themes, byId);
  return {
    company,
    environments: sortedEnvironments(byId),
    listed: { theme: { count: themes.length, ...(lastUpdatedAt ? { last_updated_at: lastUpdatedAt } : {}) } },
    last_updated_at: lastUpdatedAt,
  };
}

function cmp(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
