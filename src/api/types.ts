/**
 * Request and response shapes of the hosting API, field for field as `hosting-api-spec.md` names them.
 * Optional markers follow the spec's silence: only ids and the fields an endpoint cannot work without
 * are required (the schemas in `schemas/api/` say the same, and the simulator enforces them).
 */

export type Uuid = string;

/** The common body of every asynchronous (HTTP 202) answer. */
export interface Accepted {
  message: string;
  status: 202;
  /** `<operation_kind>-<uuid>` */
  operation_id: string;
}

export type OperationKind =
  | 'environment:add'
  | 'sites:add-domain'
  | 'domains:create-dns-record'
  | 'environment:clone'
  | 'wp-themes:bulk-update'
  /** Beyond the spec (real-service-notes.md, "Updating one theme to a given version"). */
  | 'wp-theme:update'
  /** Beyond the spec (real-service-notes.md, "Updating plugins"): the bulk update answers 200 with it, when it has one. */
  | 'wp-plugins:bulk-update'
  | 'wp-plugin:update'
  | 'php:modify-version'
  | 'sites:add-plain'
  | 'backups:add-manual'
  | 'sftp-accounts:toggle-status'
  | 'environment:run-wp-cli-command'
  | 'environments:push'
  /** Not in the spec's list: the vendor document's restore answers with an operation of no named kind. */
  | 'backups:restore'
  /** Not in the spec's list: the vendor document's removal of a backup answers with an operation of no named kind. */
  | 'backups:delete'
  /** Beyond the spec: a manual clear of an environment's page cache (shared/real-service-notes.md). */
  | 'cache:clear';

export interface ApiKey {
  id: Uuid;
  /** The spec lists every field; a key without a name or an expiry may come back with null. */
  name: string | null;
  status: string;
  expires_at: string | null;
}

export interface ApiKeyListResponse {
  api_keys: ApiKey[];
}

/**
 * One environment an item (a theme, a plugin) is installed on, as a company listing shows it: the
 * fields carry the kind's prefix (`theme_version`, `plugin_version`). The spec lists every field of
 * the theme listing; the real service may leave the optional ones out or null (`theme_update` where no
 * update is available), so only the ids, names and version are relied on.
 */
export type ListedEnvironment<P extends 'theme' | 'plugin'> = {
  id: Uuid;
  site_display_name: string;
  display_name: string;
  auto_update_type?: string | null;
} & { [K in `${P}_version`]: string } & {
  [K in `${P}_status` | `${P}_update` | `${P}_update_version` | `${P}_update_status`]?: string | null;
} & { [K in `is_${P}_version_vulnerable` | `is_${P}_update_version_vulnerable`]?: boolean | null };

export type ThemeEnvironment = ListedEnvironment<'theme'>;
/**
 * The plugin listing's sample in the vendor's changelog shows no environment `id` (the theme
 * listing's entries have one): an entry without it cannot be told from another environment of the
 * same names, so the inventory does not plan from it (inventory/read.ts).
 */
export type PluginEnvironment = Omit<ListedEnvironment<'plugin'>, 'id'> & { id?: Uuid | null };

/** One item of a company listing, with the environments it is installed on. */
export interface ListedItem<E> {
  name: string;
  title: string;
  description?: string;
  latest_version: string;
  is_latest_version_vulnerable: boolean;
  environment_count: number;
  update_count: number;
  environments: E[];
}

export type Theme = ListedItem<ThemeEnvironment>;
export type Plugin = ListedItem<PluginEnvironment>;

export interface ThemeListQuery {
  offset?: number;
  limit?: number;
  search?: string;
  status?: string;
  column?: string;
}

export interface ThemeListResponse {
  company: { themes: { total: number; last_updated_at: string; items: Theme[] } };
}

/** `GET /company/{id}/wp-plugins` (beyond the spec: real-service-notes.md, "Plugins of the company"). */
export interface PluginListResponse {
  company: { plugins: { total: number; last_updated_at: string; items: Plugin[] } };
}

/** One plugin of `GET /sites/environments/{env_id}/wp-plugins` (real-service-notes.md, "Plugins of an environment"). */
export interface EnvironmentPlugin {
  name: string;
  title?: string | null;
  status?: string | null;
  version: string;
  update?: string | null;
  update_version?: string | null;
  update_status?: string | null;
  is_version_vulnerable?: boolean | null;
  is_update_version_vulnerable?: boolean | null;
}

export interface EnvironmentPluginListResponse {
  environment: { id?: string; plugins: { items: EnvironmentPlugin[] } };
}

/** `GET /sites/environments/{env_id}/logs?file_name=error&lines=N`: the file's last lines, as one string. */
export interface LogsResponse {
  environment: { container_info: { logs: string } };
}

export interface CreateEnvironmentBody {
  display_name: string;
  site_title?: string;
  is_premium?: boolean;
  admin_email?: string;
  admin_password?: string;
  admin_user?: string;
  wp_language?: string;
  is_subdomain_multisite?: boolean;
  is_multisite?: boolean;
  commerce_plugin?: boolean;
  downloads_plugin?: boolean;
  seo_plugin?: boolean;
}

export interface AddDomainBody {
  domain_name: string;
  is_wildcardless?: boolean;
  add_with_www_subdomain?: boolean;
  setup_type?: string;
  custom_ssl_key?: string;
  custom_ssl_cert?: string;
}

export interface DnsRecordBody {
  type: string;
  name: string;
  ttl?: number;
  resource_records: { value: string }[];
}

export interface CloneEnvironmentBody {
  display_name: string;
  is_premium?: boolean;
  source_env_id: Uuid;
}

export interface SshConfig {
  site: {
    id: string;
    name: string;
    displayName: string;
    usr: string;
    environment: {
      id: string;
      activeContainer: { id: string; lxdSshPort: string; loadBalancer: { id: string; extIP: string } };
    };
  };
  port: string;
  name: string;
  host: string;
  user: string;
  ssh_command: string;
}

export interface BulkUpdateThemesBody {
  themes: { name: string }[];
}

/** The pinned update of one theme: it installs `update_version`, whatever is newest when it runs. */
export interface UpdateThemeBody {
  name: string;
  update_version: string;
}

export interface BulkUpdatePluginsBody {
  plugins: { name: string }[];
}

/** The pinned update of one plugin (both fields required by the vendor's document). */
export type UpdatePluginBody = UpdateThemeBody;

export interface ModifyPhpVersionBody {
  environment_id: Uuid;
  php_version: string;
  is_opt_out_from_automatic_php_update?: boolean;
}

export interface ClearCacheBody {
  environment_id: Uuid;
}

export interface CreatePlainEnvironmentBody {
  display_name: string;
  is_premium?: boolean;
}

export interface CreatePlainSiteBody {
  company: Uuid;
  display_name: string;
  region: string;
}

export interface ManualBackupBody {
  tag: string;
}

/** Not in the spec: the vendor document's body; the other fields come from `settings.restore`. */
export interface RestoreBackupBody {
  backup_id: number;
  notified_user_id?: string;
  env_display_name_of_backup?: string;
}

export interface ToggleSftpAccountsBody {
  enabled: boolean;
}

export interface RunWpCliBody {
  wp_command: string;
}

export interface Backup {
  id: number;
  name: string;
  note: string;
  type: string;
  created_at: number;
}

export interface BackupListResponse {
  environment: { display_name: string; backups: Backup[] };
}

export interface CreateAdminUserBody {
  email: string;
  first_name: string;
  last_name: string;
}

export interface LoginUrlBody {
  email: string;
}

export interface DeniedIpsBody {
  environment_id: Uuid;
  ip_list: string[];
}

/** The intervals the public clients of the real service agree on (the spec names only `days_7`). */
export const SSH_EXPIRATION_INTERVALS = ['days_7', 'days_30', 'days_90', 'hours_24', 'never'] as const;

/** The vendor's API document requires DNS record TTLs of at least this many seconds (the spec gives no minimum). */
export const DNS_MIN_TTL = 300;

export interface SshExpirationBody {
  exp_interval: string;
}

export interface SiteDomain {
  id: Uuid;
  name: string;
  uses_provider_dns: boolean;
}

/** A domain as the service may answer it: the vendor's document names the DNS flag `uses_cloudflare_dns`. */
export interface SiteDomainAnswer {
  id: Uuid;
  name: string;
  uses_provider_dns?: boolean;
  uses_cloudflare_dns?: boolean;
}

export interface DomainListResponse {
  environment: { site_domains: SiteDomainAnswer[] };
}

export interface SshStatusBody {
  is_enabled: boolean;
}

export interface PushEnvironmentBody {
  source_env_id: Uuid;
  target_env_id: Uuid;
  push_db?: boolean;
  push_files?: boolean;
  run_search_and_replace?: boolean;
  push_files_option?: 'ALL_FILES' | 'SPECIFIC_FILES';
  file_list?: string[];
}

/** What `GET /operations/{id}` tells, folded from its status code (202 / 200 / 500 / 404). */
export type OperationState = 'in_progress' | 'succeeded' | 'failed' | 'not_found';

export interface OperationStatus {
  operation_id: string;
  state: OperationState;
  http_status: number;
  /** The most specific text the answer gives (for a failure, its reason; see answer.ts `serviceReason`). */
  message?: string;
  /** The outer text, when the reason was found nested under it. */
  context?: string;
  /** A finished operation's `data` (what it created, what a command printed), when it says anything. */
  data?: unknown;
}

/** `GET /sites?company={id}&include_environments=true` (beyond the spec): the fields sitefleet reads of it. */
export interface SiteListResponse {
  company: {
    sites: {
      id: string;
      display_name: string;
      /** `wordpress_version`: the WordPress each runs, a string or null (real-service-notes.md, "WordPress core"). */
      environments?: { id: string; name?: string; display_name?: string; wordpress_version?: string | null }[];
    }[];
  };
}
