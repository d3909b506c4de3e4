import type { EndpointName } from '../api/endpoints.js';
import type * as T from '../api/types.js';
import {
  addDomain,
  catalogOf,
  installedOf,
  ITEM_KINDS,
  latestOf,
  newEnvironment,
  PHP_VERSIONS,
  REGIONS,
  SSH_EXPIRATION_INTERVALS,
  type Fleet,
  type ItemKind,
  type SimEnvironment,
  type SimSite,
} from './fleet.js';
import { HOSTILE_SSH } from './hostile-names.js';
import { captureState, putBack } from './backup-state.js';
import { afterUpdateEffect, filesMove } from './after-update.js';
import { coreEffect } from './core.js';
import { applyInstall, installEffect } from './item-install.js';
import type { PageCache } from './page-cache.js';
import type { OperationWork } from './operations.js';
import type { SimProfile } from './profile.js';
import type { Random } from './random.js';
import { environmentItems, listItems } from './item-listing.js';
import type { ListingLag } from './listing-lag.js';
import { LOG_FILES, MAX_LOG_LINES, type LogFile, type SiteLogs } from './site-logs.js';
import { wpCliOutput } from './wp-cli-output.js';

/** An error answer: the real service's `{status, message, data}`. */
export class SimHttpError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly data: unknown = null,
    /** A 429's wait, sent as Retry-After. */
    readonly retryAfterMs?: number,
  ) {
    super(message);
  }
}

export interface HandlerContext {
  fleet: Fleet;
  rng: Random;
  params: Record<string, string>;
  /** Checked against the endpoint's body schema before a handler sees it. */
  body: unknown;
  maxPageSize: number;
  now: number;
  /** Where the real service takes a refused write and fails its operation instead (see profile.ts). */
  profile: SimProfile;
  /** The query string's parameters (a read that takes them there: the site listing). */
  query: Record<string, string>;
  /** False: the service serves no site listing (404), as one that does not know it. */
  siteListing: boolean;
  /** The environments' page caches (what the sites' pages are served through). */
  pages: PageCache;
  /** How the plugin endpoints answer (server.ts, the options `pluginListing`, `pluginListingLagMs`, `pluginBulkOperationId`). */
  plugins: PluginServing;
  /** The environments' logs (site-logs.ts). */
  logs: SiteLogs;
  /** How `wp core update` behaves (server.ts, the option `coreUpdateNoop`). */
  core: CoreServing;
  /** The most manual backups one environment keeps (server.ts, `manualBackupLimit`); none when absent. */
  manualBackupLimit?: number;
}

export interface CoreServing {
  /** True: `wp core update` succeeds and prints nothing, but the version does not move (a failed update that says nothing). */
  updateNoop: boolean;
  /** True: `wp core update-db` fails with WP-CLI's error, leaving "Database update required" (server.ts, `coreUpdateDbFails`). */
  updateDbFails: boolean;
}

/**
 * `served`: the company plugin listing with each environment's id; `absent`: 404, as a service that
 * does not know it; `no-ids`: entries without the id, as the vendor's changelog sample shows them.
 */
export type PluginListing = 'served' | 'absent' | 'no-ids';
export const PLUGIN_LISTINGS: readonly PluginListing[] = ['served', 'absent', 'no-ids'];

export interface PluginServing {
  listing: PluginListing;
  /** False: the bulk update answers 200 without an operation and has applied the update already. */
  bulkOperationId: boolean;
  /** The company listing's lag behind writes, when it has one. */
  lag?: ListingLag;
  /**
   * Plugins whose licence is not on the sites (premium plugins, or ones with an update server of their
   * own): their update's operation succeeds and the version stays (real-service-notes.md, "After an update").
   */
  unlicensed: Set<string>;
}

/**
 * A synchronous answer, or the work of an asynchronous one (applied when its operation completes,
 * unless `failsWith` says the operation fails at its end).
 */
export type HandlerResult = { status: number; body: unknown } | { async: { envId?: string; apply: OperationWork; failsWith?: string } };

function env(ctx: HandlerContext, id = ctx.params.env_id!): SimEnvironment {
  const found = ctx.fleet.environments.get(id);
  if (!found) throw new SimHttpError(404, `Environment ${id} not found`);
  return found;
}

function site(ctx: HandlerContext): SimSite {
  const found = ctx.fleet.sites.get(ctx.params.site_id!);
  if (!found) throw new SimHttpError(404, `Site ${ctx.params.site_id} not found`);
  return found;
}

function company(ctx: HandlerContext, id: string): void {
  if (id !== ctx.fleet.companyId) throw new SimHttpError(404, `Company ${id} not found`);
}

/** The manual backups an environment holds, with one being made (an environment runs one operation at a time). */
function manualBackups(e: SimEnvironment): number {
  const making = e.busyWith?.startsWith('backups:add-manual') === true ? 1 : 0;
  return e.backups.filter((b) => b.type === 'manual').length + making;
}

function ok(body: unknown) {
  return { status: 200, body };
}

function later(envId: string | undefined, apply: OperationWork, failsWith?: string): HandlerResult {
  return { async: { envId, apply, failsWith } };
}

function sameSite(ctx: HandlerContext, s: SimSite, envId: string, field: string): SimEnvironment {
  const e = ctx.fleet.environments.get(envId);
  if (!e || e.siteId !== s.id) throw new SimHttpError(400, `${field}: environment ${envId} is not an environment of site ${s.id}`);
  return e;
}

function installDefaultTheme(ctx: HandlerContext, e: SimEnvironment): void {
  const theme = [...ctx.fleet.catalog.values()][0]!;
  e.themes.set(theme.name, { version: theme.versions.at(-1)!, status: 'active', updateStatus: 'none', autoUpdateType: 'none' });
}

/** What only plugins have: a company listing that lags (the vendor's cache of plugin data), and unlicensed ones. */
function pluginSide(ctx: HandlerContext, kind: ItemKind): HandlerContext['plugins'] | undefined {
  return kind === 'plugin' ? ctx.plugins : undefined;
}

/** The kinds whose company listing lags, and their lags. */
function lagOf(ctx: HandlerContext, kind: ItemKind): ListingLag | undefined {
  return pluginSide(ctx, kind)?.lag;
}

/** Before any write to an environment's items: the lagging listings keep what they showed. */
function beforeItemsWrite(ctx: HandlerContext, e: SimEnvironment, kinds: readonly ItemKind[] = ITEM_KINDS): void {
  for (const kind of kinds) lagOf(ctx, kind)?.beforeWrite(e, installedOf(e, kind));
}

/** Installs `version` (default: the catalogue's newest when the work runs) of each named item of a kind. */
function installVersions(ctx: HandlerContext, e: SimEnvironment, kind: ItemKind, names: string[], version?: string): void {
  beforeItemsWrite(ctx, e, [kind]);
  const installed = installedOf(e, kind);
  for (const name of names) {
    const item = installed.get(name);
    if (!item) continue; // gone since it was accepted (a restore ran first): nothing left to update
    // WordPress finds no package for a premium plugin without its licence: the service says done, nothing moved.
    if (pluginSide(ctx, kind)?.unlicensed.has(name)) continue;
    item.version = version ?? latestOf(catalogOf(ctx.fleet, kind).get(name)!);
    item.updateStatus = 'updated';
  }
}

/** The names a bulk update body gives (`{themes: [{name}]}`, `{plugins: [{name}]}`), each installed, or a 400. */
function bulkNames(ctx: HandlerContext, e: SimEnvironment, kind: ItemKind): string[] {
  const names = (ctx.body as Record<string, { name: string }[]>)[`${kind}s`]!.map((t) => t.name);
  const installed = installedOf(e, kind);
  for (const name of names) if (!installed.has(name)) throw new SimHttpError(400, `${kind}s: ${name} is not installed on environment ${e.id}`);
  return names;
}

/**
 * Beyond the spec (real-service-notes.md): one item to the version named, which must be one the
 * catalogue has; it answers 202 with a `wp-theme:update-…` or `wp-plugin:update-…` operation.
 */
function pinnedUpdate(ctx: HandlerContext, kind: ItemKind): HandlerResult {
  const e = env(ctx);
  const { name, update_version } = ctx.body as T.UpdateThemeBody;
  if (!installedOf(e, kind).has(name)) throw new SimHttpError(400, `name: ${name} is not installed on environment ${e.id}`);
  if (!catalogOf(ctx.fleet, kind).get(name)?.versions.includes(update_version))
    throw new SimHttpError(400, `update_version: ${update_version} is not a version of ${name}`);
  return later(e.id, () => installVersions(ctx, e, kind, [name], update_version));
}

/** Copies WordPress and every item of every kind from one environment onto another (a clone, a push of files). */
function copyItems(ctx: HandlerContext, from: SimEnvironment, to: SimEnvironment): void {
  beforeItemsWrite(ctx, to);
  to.wordpressVersion = from.wordpressVersion;
  for (const kind of ITEM_KINDS) for (const [name, item] of installedOf(from, kind)) installedOf(to, kind).set(name, { ...item });
}

/** `?lines=N` of a log read: a whole number from 1 to 20000, as the vendor documents. */
function logLines(ctx: HandlerContext): number {
  const raw = ctx.query.lines ?? '';
  const lines = /^\d{1,6}$/.test(raw) ? Number(raw) : 0;
  if (lines < 1 || lines > MAX_LOG_LINES) throw new SimHttpError(400, `lines: must be a whole number from 1 to ${MAX_LOG_LINES}`);
  return lines;
}

/**
 * An environment as the site listing shows it (real-service-notes.md). `wordpress_version` is null only
 * where the environment has no WordPress (a plain one), in both profiles: the notes say "string or null"
 * without saying when, and a plain environment is the one case known to have no version to show.
 */
function siteEnvironment(e: SimEnvironment) {
  const domains = e.domains.map((d) => ({ id: d.id, name: d.name, type: 'live' }));
  return {
    id: e.id,
    name: e.displayName.toLowerCase().replace(/[^a-z0-9-]+/g, '-'),
    display_name: e.displayName,
    is_blocked: false,
    id_edge_cache: null,
    cdn_cache_id: null,
    wordpress_version: e.wordpressVersion,
    domains,
    primaryDomain: domains[0] ?? null,
  };
}

export const HANDLERS: Record<EndpointName, (ctx: HandlerContext) => HandlerResult> = {
  listApiKeys(ctx) {
    company(ctx, ctx.params.id!);
    return ok({ api_keys: ctx.fleet.apiKeys });
  },
  // Beyond the spec (real-service-notes.md, "The company's sites"): every site with its environments.
  listSites(ctx) {
    if (!ctx.siteListing) throw new SimHttpError(404, 'No route for GET /sites');
    if (ctx.query.company === undefined) throw new SimHttpError(400, 'company: is required');
    company(ctx, ctx.query.company);
    const withEnvironments = ctx.query.include_environments === 'true';
    const sites = [...ctx.fleet.sites.values()].map((s) => ({
      id: s.id,
      name: s.displayName.toLowerCase().replace(/[^a-z0-9-]+/g, '-'),
      display_name: s.displayName,
      status: 'live',
      ...(withEnvironments ? { environments: s.envIds.map((id) => siteEnvironment(ctx.fleet.environments.get(id)!)) } : {}),
    }));
    return ok({ company: { sites } });
  },
  listThemes(ctx) {
    company(ctx, ctx.params.id!);
    return ok(listItems(ctx.fleet, 'theme', ctx.body ?? {}, ctx.maxPageSize));
  },
  // Beyond the spec (real-service-notes.md, "Plugins of the company"): the theme listing's twin, which
  // may lag behind writes and, in the vendor's sample, shows no environment id.
  listPlugins(ctx) {
    if (ctx.plugins.listing === 'absent') throw new SimHttpError(404, `No route for GET /company/${ctx.params.id}/wp-plugins`);
    company(ctx, ctx.params.id!);
    const lag = ctx.plugins.lag;
    const installed = (e: SimEnvironment) => (lag ? lag.seen(e, e.plugins) : e.plugins);
    return ok(listItems(ctx.fleet, 'plugin', ctx.body ?? {}, ctx.maxPageSize, { installed, withIds: ctx.plugins.listing !== 'no-ids' }));
  },
  listEnvironmentPlugins(ctx) {
    return ok(environmentItems(ctx.fleet, env(ctx), 'plugin'));
  },
  // 200, with an operation unless the service applied it at once (real-service-notes.md, "Updating plugins").
  bulkUpdatePlugins(ctx) {
    const e = env(ctx);
    const names = bulkNames(ctx, e, 'plugin');
    if (ctx.plugins.bulkOperationId) return later(e.id, () => installVersions(ctx, e, 'plugin', names));
    installVersions(ctx, e, 'plugin', names);
    ctx.fleet.lastUpdatedAt = ctx.now;
    return ok({ message: 'Successfully updated WP plugins', status: 200 });
  },
  updatePlugin: (ctx) => pinnedUpdate(ctx, 'plugin'),
  getLogs(ctx) {
    const e = env(ctx);
    const file = ctx.query.file_name ?? '';
    if (!(LOG_FILES as readonly string[]).includes(file)) throw new SimHttpError(400, `file_name: must be one of ${LOG_FILES.join(', ')}`);
    return ok({ environment: { container_info: { logs: ctx.logs.tail(e.id, file as LogFile, logLines(ctx)) } } });
  },
  createEnvironment(ctx) {
    const s = site(ctx);
    const body = ctx.body as T.CreateEnvironmentBody;
    return later(undefined, () => {
      const created = newEnvironment(ctx.fleet, ctx.rng, s, body.display_name);
      created.wordpressVersion = ctx.fleet.core.releases.at(-1)!; // a new install downloads the newest release
      installDefaultTheme(ctx, created);
      if (body.admin_password !== undefined) created.adminPassword = body.admin_password;
      return { idEnv: created.id };
    });
  },
  addDomain(ctx) {
    const e = env(ctx);
    const body = ctx.body as T.AddDomainBody;
    const name = body.domain_name.toLowerCase();
    const inUse = [...ctx.fleet.domains.values()].some((d) => d.name === name);
    if (inUse && ctx.profile !== 'real') throw new SimHttpError(400, `domain_name: ${name} is already in use`);
    const id = ctx.rng.uuid();
    // The real service accepts the write and fails its operation (a recorded answer): the fleet stays as it is.
    const failsWith = inUse ? `This domain "${name}" is already in use` : undefined;
    return later(
      e.id,
      () => {
        addDomain(ctx.fleet, id, e.id, name, body.setup_type === 'quick');
      },
      failsWith,
    );
  },
  createDnsRecord(ctx) {
    const domain = ctx.fleet.domains.get(ctx.params.domain_id!);
    if (!domain) throw new SimHttpError(404, `Domain ${ctx.params.domain_id} not found`);
    if (!domain.usesProviderDns) throw new SimHttpError(400, `Domain ${domain.name} does not use the provider's DNS`);
    const body = ctx.body as T.DnsRecordBody;
    if (body.name !== domain.name && !body.name.endsWith(`.${domain.name}`)) {
      throw new SimHttpError(400, `name: ${body.name} is not within ${domain.name}`);
    }
    return later(undefined, () => {
      domain.records.push(structuredClone(body));
    });
  },
  cloneEnvironment(ctx) {
    const s = site(ctx);
    const body = ctx.body as T.CloneEnvironmentBody;
    const source = sameSite(ctx, s, body.source_env_id, 'source_env_id');
    return later(source.id, () => {
      const copy = newEnvironment(ctx.fleet, ctx.rng, s, body.display_name);
      copyItems(ctx, source, copy);
      copy.phpVersion = source.phpVersion;
      return { idEnv: copy.id };
    });
  },
  getSshConfig(ctx) {
    const s = site(ctx);
    const e = env(ctx);
    if (e.siteId !== s.id) throw new SimHttpError(404, `Environment ${e.id} not found in site ${s.id}`);
    const n = [...ctx.fleet.sites.keys()].indexOf(s.id) + 1;
    // Among hostile names, some sites' answers smuggle a directive into the host or the port.
    const hostile = ctx.fleet.names === 'hostile';
    const host = hostile && n % 4 === 1 ? HOSTILE_SSH.host : `ssh.${s.region}.hosting.example`;
    const port = hostile && n % 4 === 2 ? HOSTILE_SSH.port : String(2200 + (n % 700));
    const user = `${s.displayName.replace(/[^a-z0-9]/g, '')}-${e.displayName}`;
    return ok({
      site: {
        id: s.id,
        name: s.displayName,
        displayName: s.displayName,
        usr: `site${n}`,
        environment: {
          id: e.id,
          activeContainer: { id: `ct-${e.id.slice(0, 8)}`, lxdSshPort: port, loadBalancer: { id: `lb-${s.region}`, extIP: `192.0.2.${n % 250}` } },
        },
      },
      port,
      name: s.displayName,
      host,
      user,
      ssh_command: `ssh -p ${port} ${user}@${host}`,
    });
  },
  bulkUpdateThemes(ctx) {
    const e = env(ctx);
    const names = bulkNames(ctx, e, 'theme');
    return later(e.id, () => installVersions(ctx, e, 'theme', names));
  },
  updateTheme: (ctx) => pinnedUpdate(ctx, 'theme'),
  modifyPhpVersion(ctx) {
    const body = ctx.body as T.ModifyPhpVersionBody;
    const e = env(ctx, body.environment_id);
    if (!(PHP_VERSIONS as readonly string[]).includes(body.php_version)) {
      throw new SimHttpError(400, `php_version: ${body.php_version} is not offered (offered: ${PHP_VERSIONS.join(', ')})`);
    }
    return later(e.id, () => {
      e.phpVersion = body.php_version;
      if (body.is_opt_out_from_automatic_php_update !== undefined) e.phpAutoUpdateOptOut = body.is_opt_out_from_automatic_php_update;
    });
  },
  createPlainEnvironment(ctx) {
    const s = site(ctx);
    const body = ctx.body as T.CreatePlainEnvironmentBody;
    return later(undefined, () => {
      const created = newEnvironment(ctx.fleet, ctx.rng, s, body.display_name);
      created.wordpressVersion = null; // plain: no WordPress installed
      return { idEnv: created.id };
    });
  },
  createPlainSite(ctx) {
    const body = ctx.body as T.CreatePlainSiteBody;
    company(ctx, body.company);
    if (!(REGIONS as readonly string[]).includes(body.region))
      throw new SimHttpError(400, `region: ${body.region} is not a region (regions: ${REGIONS.join(', ')})`);
    const id = ctx.rng.uuid();
    return later(undefined, () => {
      ctx.fleet.sites.set(id, { id, displayName: body.display_name, region: body.region, envIds: [] });
      return { idSite: id };
    });
  },
  addManualBackup(ctx) {
    const e = env(ctx);
    const tag = (ctx.body as T.ManualBackupBody).tag;
    const limit = ctx.manualBackupLimit;
    // The real service refuses a sixth and removes nothing (real-service-notes.md); a backup being made counts.
    if (limit !== undefined && manualBackups(e) >= limit)
      throw new SimHttpError(400, `This environment has reached its limit of ${limit} manual backups. Delete one to create a new one.`);
    return later(e.id, () => {
      const id = ctx.fleet.nextBackupId++;
      e.backups.push({ id, name: `manual-${id}`, note: tag, type: 'manual', created_at: ctx.fleet.lastUpdatedAt });
      ctx.fleet.backupStates.set(id, captureState(e));
    });
  },
  // The vendor document's removal (real-service-notes.md, "Removing"): any backup by its id, an
  // operation of its environment; one unknown is refused at once.
  deleteBackup(ctx) {
    const id = Number(ctx.params.backup_id);
    const e = [...ctx.fleet.environments.values()].find((x) => x.backups.some((b) => b.id === id));
    if (!e) throw new SimHttpError(404, `Backup ${ctx.params.backup_id} not found`);
    return later(e.id, () => {
      e.backups = e.backups.filter((b) => b.id !== id);
      ctx.fleet.backupStates.delete(id);
    });
  },
  // Not shown by the spec: the vendor document's path and body (real-service-notes.md). A backup of
  // another environment, or one unknown, is refused at once, as the service refuses a bad id.
  restoreBackup(ctx) {
    const e = env(ctx, ctx.params.target_env_id);
    const { backup_id } = ctx.body as T.RestoreBackupBody;
    const state = e.backups.some((b) => b.id === backup_id) ? ctx.fleet.backupStates.get(backup_id) : undefined;
    if (!state) throw new SimHttpError(404, `Backup ${backup_id} not found for environment ${e.id}`);
    return later(e.id, () => {
      beforeItemsWrite(ctx, e);
      putBack(e, state);
    });
  },
  toggleSftpAccounts(ctx) {
    const e = env(ctx);
    const enabled = (ctx.body as T.ToggleSftpAccountsBody).enabled;
    return later(e.id, () => {
      e.sftpAccountsEnabled = enabled;
    });
  },
  // `wp core …` is judged on the environment as it is when accepted (core.ts); an update moves the
  // version when its operation completes, and prints nothing back, as the notes say.
  runWpCliCommand(ctx) {
    const e = env(ctx);
    const command = (ctx.body as T.RunWpCliBody).wp_command;
    const words = command.trim().split(/\s+/);
    const after = afterUpdateEffect(e, words, ctx.core.updateDbFails);
    const core = after ?? coreEffect(ctx.fleet.core, e.wordpressVersion, words) ?? installEffect(ctx.fleet, e, words);
    const failsWith = core && 'failsWith' in core ? core.failsWith : undefined;
    const install = core && 'item' in core ? core.item : undefined;
    const moveTo = core && 'moveTo' in core && !ctx.core.updateNoop ? core.moveTo : undefined;
    return later(
      e.id,
      () => {
        e.wpCommands.push(command);
        if (moveTo !== undefined) filesMove(e, moveTo);
        if (after && 'apply' in after) after.apply(e);
        if (install) {
          beforeItemsWrite(ctx, e);
          applyInstall(e, install);
        }
        const printed = wpCliOutput(e, command);
        return printed === null ? null : { result: printed };
      },
      failsWith,
    );
  },
  clearCache(ctx) {
    const e = env(ctx, (ctx.body as T.ClearCacheBody).environment_id);
    const waitMs = ctx.pages.askClear(e.id);
    if (waitMs > 0) throw new SimHttpError(429, 'Too many cache clear requests, please try again later.', null, waitMs);
    // Not tied to the environment's other operations: a clear neither waits for nor blocks an update.
    return later(undefined, () => ctx.pages.clear(e.id));
  },
  listBackups(ctx) {
    const e = env(ctx);
    return ok({ environment: { display_name: e.displayName, backups: e.backups } });
  },
  createAdminUser(ctx) {
    const e = env(ctx);
    const body = ctx.body as T.CreateAdminUserBody;
    const email = body.email.toLowerCase();
    if (e.adminUsers.has(email)) return ok({ create_wp_admin_user: false });
    e.adminUsers.set(email, { first_name: body.first_name, last_name: body.last_name });
    return ok({ create_wp_admin_user: true });
  },
  getLoginUrl(ctx) {
    const e = env(ctx);
    const email = (ctx.body as T.LoginUrlBody).email.toLowerCase();
    if (!e.adminUsers.has(email)) throw new SimHttpError(404, `No admin user ${email} on environment ${e.id}`);
    const host = e.domains[0]?.name ?? `${e.id}.hosting.example`;
    return ok({ login_link: `https://${host}/wp-login.php?sso_token=${ctx.rng.uuid().replace(/-/g, '')}` });
  },
  setDeniedIps(ctx) {
    const body = ctx.body as T.DeniedIpsBody;
    const e = env(ctx, body.environment_id);
    e.deniedIps = [...body.ip_list];
    ctx.fleet.lastUpdatedAt = ctx.now;
    return ok({ result: null });
  },
  setSshExpiration(ctx) {
    const e = env(ctx);
    const interval = (ctx.body as T.SshExpirationBody).exp_interval;
    if (!(SSH_EXPIRATION_INTERVALS as readonly string[]).includes(interval)) {
      throw new SimHttpError(400, `exp_interval: must be one of ${SSH_EXPIRATION_INTERVALS.join(', ')}`);
    }
    e.sshExpInterval = interval;
    return ok({ result: null });
  },
  listDomains(ctx) {
    const e = env(ctx);
    return ok({ environment: { site_domains: e.domains.map((d) => ({ id: d.id, name: d.name, uses_provider_dns: d.usesProviderDns })) } });
  },
  setSshStatus(ctx) {
    const e = env(ctx);
    e.sshEnabled = (ctx.body as T.SshStatusBody).is_enabled;
    return ok({ result: null });
  },
  pushEnvironment(ctx) {
    const s = site(ctx);
    const body = ctx.body as T.PushEnvironmentBody;
    const source = sameSite(ctx, s, body.source_env_id, 'source_env_id');
    const target = sameSite(ctx, s, body.target_env_id, 'target_env_id');
    if (source.id === target.id) throw new SimHttpError(400, 'target_env_id: must differ from source_env_id');
    return later(target.id, () => {
      if (body.push_files !== false) copyItems(ctx, source, target);
    });
  },
};
