import type { Backup } from '../api/types.js';
import { HOSTILE_NAMES, hostileName, type FleetNames } from './hostile-names.js';
import { makeCatalog, type CatalogItem, type CatalogShape } from './catalog.js';
import { coreReleases, drawnCoreVersion, type CoreReleases } from './core.js';
import { NAMED_PLUGINS, PLUGIN_SHAPE } from './plugin-catalog.js';
import { Random } from './random.js';

/**
 * The simulator's world: one company, its sites, environments, installed items (themes and
 * plugins, one model by kind), domains and backups.
 */
export type ItemKind = 'theme' | 'plugin';
export const ITEM_KINDS: readonly ItemKind[] = ['theme', 'plugin'];

/** An item (a theme or a plugin) installed on an environment. */
export interface InstalledItem {
  version: string;
  status: 'active' | 'inactive';
  /** `updated` once a bulk update brought it to the latest version. */
  updateStatus: string;
  autoUpdateType: string;
}

export interface SimDomain {
  id: string;
  envId: string;
  name: string;
  usesProviderDns: boolean;
  records: { type: string; name: string; ttl?: number; resource_records: { value: string }[] }[];
}

export interface SimEnvironment {
  id: string;
  siteId: string;
  displayName: string;
  themes: Map<string, InstalledItem>;
  plugins: Map<string, InstalledItem>;
  /** The WordPress release it runs (core.ts); null on a plain environment, which has no WordPress. */
  wordpressVersion: string | null;
  /**
   * The release whose database the site has, when WordPress's files moved past it without
   * `wp core update-db` (after-update.ts): wp-admin says "Database update required" across an x.y
   * release. Absent: the database is the files' own.
   */
  wordpressDb?: string;
  phpVersion: string;
  phpAutoUpdateOptOut: boolean;
  deniedIps: string[];
  sshEnabled: boolean;
  sshExpInterval: string;
  sftpAccountsEnabled: boolean;
  domains: SimDomain[];
  backups: Backup[];
  adminUsers: Map<string, { first_name: string; last_name: string }>;
  wpCommands: string[];
  /** A shop's orders (shop.ts): data in its database, kept by a backup, lost by a restore to an older one. */
  orders?: number;
  /** The admin password it was created with: kept so that a test sees a secret arrive filled in (never logged). */
  adminPassword?: string;
  /** The operation now running on this environment, if any. */
  busyWith?: string;
}

/**
 * What a backup keeps of its environment, as far as the simulator models one: the themes and
 * plugins and their versions, the WordPress and PHP versions, the denied IPs, and the SSH and SFTP settings. Restoring it puts these
 * back (a site whose breaking theme version is reverted is healthy again).
 */
export interface EnvironmentState extends Pick<
  SimEnvironment,
  'wordpressVersion' | 'wordpressDb' | 'phpVersion' | 'phpAutoUpdateOptOut' | 'deniedIps' | 'sshEnabled' | 'sshExpInterval' | 'sftpAccountsEnabled' | 'orders'
> {
  themes: [string, InstalledItem][];
  plugins: [string, InstalledItem][];
}

export interface SimSite {
  id: string;
  displayName: string;
  region: string;
  envIds: string[];
}

export type { CatalogItem } from './catalog.js';

export interface Fleet {
  companyId: string;
  /** `hostile`: names from the hostile corpus (see hostile-names.ts). */
  names: FleetNames;
  apiKeys: { id: string; name: string; status: string; expires_at: string }[];
  sites: Map<string, SimSite>;
  environments: Map<string, SimEnvironment>;
  domains: Map<string, SimDomain>;
  /** The theme catalogue (named before plugins came: the tests read it so). */
  catalog: Map<string, CatalogItem>;
  pluginCatalog: Map<string, CatalogItem>;
  /** The WordPress releases environments run and `wp core update` installs (core.ts). */
  core: CoreReleases;
  nextBackupId: number;
  lastUpdatedAt: number;
  /** What each backup keeps of its environment (backup-state.ts), by backup id: never in an answer. */
  backupStates: Map<number, EnvironmentState>;
}

export interface FleetOptions {
  seed: number;
  /** Plain names (default), or the hostile corpus for sites, staging environments, backups and a key. */
  names?: FleetNames;
  sites: number;
  themes: number;
  /** Plugins installed on each environment (default: drawn from 5 to 40). */
  pluginsPerEnv?: number;
  /** The WordPress releases (default CORE_VERSIONS, none newer). */
  core?: CoreReleases;
  /** Backups are aged from this moment (ms since the epoch; default now), so "younger than 26 h" means something. */
  now?: number;
}

const HOUR = 3_600_000;

export const PHP_VERSIONS = ['7.4', '8.0', '8.1', '8.2', '8.3', '8.4'] as const;
export const REGIONS = ['us-central1', 'us-east1', 'europe-west1', 'europe-west3', 'asia-southeast1'] as const;
/** The spec names `days_7` and says there are five; the other four are the simulator's guess. */
export { SSH_EXPIRATION_INTERVALS } from '../api/types.js';
export const SERVICE_AUTO_UPDATE = 'managed';

/**
 * Where a kind's items live: the environment's and the fleet's fields keep the names they had
 * before plugins (`themes`, `catalog`), which the whole test suite reads.
 */
export function installedOf(env: SimEnvironment, kind: ItemKind): Map<string, InstalledItem> {
  return kind === 'theme' ? env.themes : env.plugins;
}

export function catalogOf(fleet: Fleet, kind: ItemKind): Map<string, CatalogItem> {
  return kind === 'theme' ? fleet.catalog : fleet.pluginCatalog;
}

/** The latest version of a catalogue item. */
export function latestOf(item: CatalogItem): string {
  return item.versions.at(-1)!;
}

const SITE_PREFIXES = ['acme', 'blue', 'coral', 'delta', 'ember', 'fjord', 'legacy', 'nova'];
const THEME_NAMES = [
  'astra',
  'neve',
  'kadence',
  'generatepress',
  'oceanwp',
  'hestia',
  'sydney',
  'zakra',
  'blocksy',
  'hello-elementor',
  'storefront',
  'twentytwentyfour',
  'twentytwentythree',
  'colibri-wp',
  'popularfx',
  'spectra-one',
];
/** A fixed "now" for generated history, so the same seed gives the same fleet on any day. */
const EPOCH = Date.UTC(2026, 0, 1);

export function title(slug: string): string {
  return slug.replace(/(^|-)([a-z])/g, (_, dash: string, c: string) => (dash ? ' ' : '') + c.toUpperCase());
}

/** The theme catalogue's names and spread of versions. */
const THEME_SHAPE: CatalogShape = {
  named(i) {
    const name = THEME_NAMES[i] ?? `theme-${String(i + 1).padStart(3, '0')}`;
    return { name, title: title(name), description: `The ${title(name)} theme.` };
  },
  majors: [1, 4],
  versionCount: [3, 7],
  patches: 3,
  olderVulnerable: 0.25,
  latestVulnerable: 0.2,
};

export function generateFleet(options: FleetOptions): Fleet {
  const rng = new Random(options.seed);
  const catalog = makeCatalog(rng, Math.max(1, options.themes), THEME_SHAPE);
  const themeNames = [...catalog.keys()];
  // Keys as a company has them: one for automation, one about to expire, one expired, one revoked.
  const now = options.now ?? Date.now();
  const inDays = (days: number) => new Date(now + days * 24 * HOUR).toISOString().replace(/\.\d{3}Z$/, '.000Z');
  const hostile = options.names === 'hostile';
  const fleet: Fleet = {
    companyId: rng.uuid(),
    names: options.names ?? 'plain',
    apiKeys: [
      { id: rng.uuid(), name: 'automation', status: 'active', expires_at: inDays(400) },
      { id: rng.uuid(), name: hostile ? HOSTILE_NAMES[0]! : 'ci-deploy', status: 'active', expires_at: inDays(10) },
      { id: rng.uuid(), name: 'old-integration', status: 'expired', expires_at: inDays(-30) },
      { id: rng.uuid(), name: 'contractor', status: 'revoked', expires_at: inDays(200) },
    ],
    sites: new Map(),
    environments: new Map(),
    domains: new Map(),
    catalog,
    pluginCatalog: new Map(),
    core: options.core ?? coreReleases(),
    nextBackupId: 1000,
    backupStates: new Map(),
    lastUpdatedAt: EPOCH,
  };
  for (let i = 0; i < options.sites; i++) {
    const plainName = `${SITE_PREFIXES[i % SITE_PREFIXES.length]}-${String(i + 1).padStart(3, '0')}`;
    const siteName = hostile ? hostileName(i) : plainName;
    const site: SimSite = { id: rng.uuid(), displayName: siteName, region: rng.pick(REGIONS), envIds: [] };
    fleet.sites.set(site.id, site);
    const envNames = rng.chance(0.7) ? ['live', hostile ? hostileName(i + 5) : 'staging'] : ['live'];
    for (const envName of envNames) {
      const env = newEnvironment(fleet, rng, site, envName);
      const installCount = Math.min(themeNames.length, rng.int(1, 3));
      const chosen = new Set<string>();
      while (chosen.size < installCount) chosen.add(rng.pick(themeNames));
      let first = true;
      for (const name of chosen) {
        const versions = catalog.get(name)!.versions;
        const version = rng.chance(0.5) ? versions.at(-1)! : rng.pick(versions);
        env.themes.set(name, {
          version,
          status: first ? 'active' : 'inactive',
          updateStatus: 'none',
          autoUpdateType: rng.chance(0.15) ? SERVICE_AUTO_UPDATE : 'none',
        });
        first = false;
      }
      // The service checks domain names, so these stay plain even among hostile site names.
      const host = envName === 'live' ? `${plainName}.example.com` : `staging.${plainName}.example.com`;
      addDomain(fleet, rng.uuid(), env.id, host, rng.chance(0.6));
      // A nightly scheduled backup (one environment in eight missed last night's), a weekly system
      // one, and a manual one from some launch or other.
      const now = options.now ?? Date.now();
      const ages: [string, number, string][] = [
        ['scheduled', rng.chance(0.125) ? rng.int(30, 60) * HOUR : rng.int(2, 20) * HOUR, ''],
        ['scheduled', rng.int(26, 44) * HOUR, ''],
        ['system', rng.int(2, 7) * 24 * HOUR, ''],
        ['manual', rng.int(5, 60) * 24 * HOUR, hostile ? hostileName(i + 1) : 'before launch'],
      ];
      for (const [type, age, note] of ages) {
        env.backups.push({ id: fleet.nextBackupId++, name: `${type}-${fleet.nextBackupId}`, note, type, created_at: now - age });
      }
    }
  }
  addPlugins(fleet, options);
  return fleet;
}

/**
 * The plugins come from a stream of their own, drawn after the themes: the same seed gives the same
 * theme side (every theme answer, id and backup) as before plugins were modelled.
 */
function addPlugins(fleet: Fleet, options: FleetOptions): void {
  const rng = new Random(Math.imul(options.seed ^ 0x706c7567, 0x9e3779b1)); // 'plug'
  fleet.pluginCatalog = makeCatalog(rng, Math.max(NAMED_PLUGINS, options.pluginsPerEnv ?? 0), PLUGIN_SHAPE);
  for (const env of fleet.environments.values()) installPlugins(env, fleet.pluginCatalog, rng, options.pluginsPerEnv);
}

/**
 * Installs `count` plugins (default: drawn from 5 to 40) on an environment, in catalogue order:
 * about three in four active, about half behind their latest version.
 */
function installPlugins(env: SimEnvironment, catalog: Map<string, CatalogItem>, rng: Random, count?: number): void {
  const items = [...catalog.values()];
  const wanted = Math.min(items.length, count ?? rng.int(5, 40));
  // Selection sampling (Knuth's algorithm S): each plugin in turn, kept with the chance still needed.
  let left = wanted;
  for (let i = 0; i < items.length && left > 0; i++) {
    if (rng.next() * (items.length - i) >= left) continue;
    left--;
    const { name, versions } = items[i]!;
    env.plugins.set(name, {
      version: rng.chance(0.5) ? versions.at(-1)! : rng.pick(versions.slice(0, -1)),
      status: rng.chance(0.75) ? 'active' : 'inactive',
      updateStatus: 'none',
      autoUpdateType: rng.chance(0.1) ? SERVICE_AUTO_UPDATE : 'none',
    });
  }
}

/** A new environment of `site`, running the WordPress release its id draws (the caller sets another where it knows better). */
export function newEnvironment(fleet: Fleet, rng: Random, site: SimSite, displayName: string): SimEnvironment {
  const id = rng.uuid();
  const env: SimEnvironment = {
    id,
    siteId: site.id,
    displayName,
    themes: new Map(),
    plugins: new Map(),
    wordpressVersion: drawnCoreVersion(id, fleet.core.installed),
    phpVersion: rng.pick(PHP_VERSIONS.slice(0, 5)),
    phpAutoUpdateOptOut: false,
    deniedIps: [],
    sshEnabled: true,
    sshExpInterval: 'days_30',
    sftpAccountsEnabled: false,
    domains: [],
    backups: [],
    adminUsers: new Map([['admin@example.com', { first_name: 'Site', last_name: 'Admin' }]]),
    wpCommands: [],
  };
  fleet.environments.set(env.id, env);
  site.envIds.push(env.id);
  return env;
}

export function addDomain(fleet: Fleet, id: string, envId: string, name: string, usesProviderDns: boolean): SimDomain {
  const domain: SimDomain = { id, envId, name, usesProviderDns, records: [] };
  fleet.domains.set(id, domain);
  fleet.environments.get(envId)!.domains.push(domain);
  return domain;
}

/** What `rename` can rename, as a client of the service can in its dashboard. */
export const RENAMABLE = ['site', 'environment', 'domain'] as const;
export type Renamable = (typeof RENAMABLE)[number];

/**
 * Renames a site (by its name), an environment (`SITE/ENV`) or a domain (its name), as anyone on
 * the account may: the tests and the demo play the attacker with it. Returns the renamed thing's id.
 */
export function rename(fleet: Fleet, kind: Renamable, from: string, to: string): string {
  const site = (name: string) => [...fleet.sites.values()].find((s) => s.displayName === name);
  if (kind === 'site') {
    const found = site(from);
    if (!found) throw new Error(`no site named ${JSON.stringify(from)}`);
    found.displayName = to;
    return found.id;
  }
  if (kind === 'environment') {
    const cut = from.lastIndexOf('/');
    const env = site(from.slice(0, cut))
      ?.envIds.map((id) => fleet.environments.get(id)!)
      .find((e) => e.displayName === from.slice(cut + 1));
    if (cut < 0 || !env) throw new Error(`no environment ${JSON.stringify(from)} (give it as SITE/ENV)`);
    env.displayName = to;
    return env.id;
  }
  const domain = [...fleet.domains.values()].find((d) => d.name === from);
  if (!domain) throw new Error(`no domain named ${JSON.stringify(from)}`);
  domain.name = to;
  return domain.id;
}
