import type {
  ApiKeyListResponse,
  BackupListResponse,
  DomainListResponse,
  EnvironmentPluginListResponse,
  LogsResponse,
  OperationKind,
  PluginListResponse,
  SiteListResponse,
  SshConfig,
  ThemeListResponse,
} from './types.js';

/**
 * The 22 endpoints of the spec as data (and, with their `evidence`, restore, which it names without
 * showing, and the cache clear): method, path template, the schema of the body (a file in
 * `schemas/api/`), for asynchronous ones the operation kind the 202 carries, and for the reads the
 * runner plans from, the schema their answers are checked against. The client's `call` and
 * the simulator's router are both built from this table, and a test checks it
 * against the spec's literal paths, so the two cannot drift apart silently.
 */
export interface Endpoint {
  method: 'GET' | 'POST' | 'PUT' | 'DELETE';
  /** Relative to `{base_url}/v2`; `{name}` marks a path parameter. */
  path: string;
  /** Name of the body schema in `schemas/api/`, when the endpoint takes a body. */
  body?: string;
  /** Operation kind for asynchronous (202) endpoints. */
  operation?: OperationKind;
  /** Name of the schema in `schemas/api/` every 2xx answer is checked against: the fields the runner relies on. */
  response?: string;
  /**
   * Not shown by the spec (it says the endpoint exists): where this entry's method, path and body
   * come from instead. The spec's own endpoints have none.
   */
  evidence?: string;
  /**
   * The call creates a resource (a site, an environment, a backup, a domain, a DNS record): public
   * sources document a separate limit of 5 such calls a minute beside the general 120.
   */
  creates?: true;
  /**
   * The service also limits this call per environment (a manual cache clear: one every 10 s): a 429
   * on it while the general budget has room is that rule's, and teaches the general budget nothing.
   */
  perEnvironment?: true;
  /**
   * The service keeps a limit of its own on this endpoint beside the general one (the logs: about 35
   * reads a minute, real-service-notes.md "Limits"): its calls take a slot of that rule as well, and a
   * 429 on one while the general budget has room is that rule's.
   */
  ownLimit?: 'logs';
}

export const ENDPOINTS = {
  listApiKeys: { method: 'GET', path: '/company/{id}/api-keys', response: 'api-key-list-response' },
  listThemes: { method: 'GET', path: '/company/{id}/wp-themes', body: 'theme-list-query', response: 'theme-list-response' },
  // Plugins: beyond the spec, the twins of the theme endpoints (shared/real-service-notes.md, "Beyond the spec").
  listPlugins: {
    method: 'GET',
    path: '/company/{id}/wp-plugins',
    body: 'theme-list-query',
    response: 'plugin-list-response',
    evidence: 'shared/real-service-notes.md, "Plugins of the company": the twin of the theme listing, with the same filters and paging',
  },
  listEnvironmentPlugins: {
    method: 'GET',
    path: '/sites/environments/{env_id}/wp-plugins',
    response: 'environment-plugin-list-response',
    evidence: 'shared/real-service-notes.md, "Plugins of an environment": environment.plugins.items[] with the vulnerability flags',
  },
  bulkUpdatePlugins: {
    method: 'PUT',
    path: '/sites/environments/{env_id}/plugins/bulk-update',
    body: 'bulk-update-plugins',
    operation: 'wp-plugins:bulk-update',
    evidence: 'shared/real-service-notes.md, "Updating plugins": 200 with an optional operation_id wp-plugins:bulk-update-…',
  },
  updatePlugin: {
    method: 'PUT',
    path: '/sites/environments/{env_id}/plugins',
    body: 'update-plugin',
    operation: 'wp-plugin:update',
    evidence: 'shared/real-service-notes.md, "Updating plugins": {name, update_version}, 202 with operation_id wp-plugin:update-…',
  },
  getLogs: {
    method: 'GET',
    path: '/sites/environments/{env_id}/logs',
    response: 'logs-response',
    evidence: 'shared/real-service-notes.md, "Logs": file_name=error|access|kinsta-cache-perf, lines ≤ 20000, in the query',
    ownLimit: 'logs',
  },
  createEnvironment: { method: 'POST', path: '/sites/{site_id}/environments', body: 'create-environment', operation: 'environment:add', creates: true },
  addDomain: { method: 'POST', path: '/sites/environments/{env_id}/domains', body: 'add-domain', operation: 'sites:add-domain', creates: true },
  createDnsRecord: {
    method: 'POST',
    path: '/domains/{domain_id}/dns-records',
    body: 'create-dns-record',
    operation: 'domains:create-dns-record',
    creates: true,
  },
  cloneEnvironment: { method: 'POST', path: '/sites/{site_id}/environments/clone', body: 'clone-environment', operation: 'environment:clone', creates: true },
  getSshConfig: { method: 'GET', path: '/sites/{site_id}/environments/{env_id}/ssh/config', response: 'ssh-config-response' },
  bulkUpdateThemes: { method: 'PUT', path: '/sites/environments/{env_id}/themes/bulk-update', body: 'bulk-update-themes', operation: 'wp-themes:bulk-update' },
  // The bulk update names no version and installs whatever is newest when the service runs it: a
  // version a policy judged goes by this one, which names it.
  updateTheme: {
    method: 'PUT',
    path: '/sites/environments/{env_id}/themes',
    body: 'update-theme',
    operation: 'wp-theme:update',
    evidence: 'shared/real-service-notes.md, "Updating one theme to a given version": 202 with operation_id wp-theme:update-…',
  },
  modifyPhpVersion: { method: 'PUT', path: '/sites/tools/modify-php-version', body: 'modify-php-version', operation: 'php:modify-version' },
  // The spec: creating a plain environment answers with an operation id of kind environment:clone.
  createPlainEnvironment: {
    method: 'POST',
    path: '/sites/{site_id}/environments/plain',
    body: 'create-plain-environment',
    operation: 'environment:clone',
    creates: true,
  },
  createPlainSite: { method: 'POST', path: '/sites/plain', body: 'create-plain-site', operation: 'sites:add-plain', creates: true },
  addManualBackup: {
    method: 'POST',
    path: '/sites/environments/{env_id}/manual-backups',
    body: 'manual-backup',
    operation: 'backups:add-manual',
    creates: true,
  },
  toggleSftpAccounts: {
    method: 'PUT',
    path: '/sites/environments/{env_id}/additional-sftp-accounts/toggle-status',
    body: 'toggle-sftp-accounts',
    operation: 'sftp-accounts:toggle-status',
  },
  runWpCliCommand: { method: 'POST', path: '/sites/environments/{env_id}/run-wp-cli-command', body: 'run-wp-cli', operation: 'environment:run-wp-cli-command' },
  listBackups: { method: 'GET', path: '/sites/environments/{env_id}/backups', response: 'backup-list-response' },
  createAdminUser: { method: 'POST', path: '/sites/environments/{env_id}/wpa-create-user', body: 'create-admin-user' },
  getLoginUrl: { method: 'POST', path: '/sites/environments/{env_id}/wpa-login-url', body: 'login-url' },
  setDeniedIps: { method: 'PUT', path: '/sites/tools/denied-ips', body: 'denied-ips' },
  setSshExpiration: { method: 'POST', path: '/sites/environments/{env_id}/ssh/change-expiration-interval', body: 'ssh-expiration' },
  listDomains: { method: 'GET', path: '/sites/environments/{env_id}/domains', response: 'domain-list-response' },
  setSshStatus: { method: 'POST', path: '/sites/environments/{env_id}/ssh/set-status', body: 'ssh-status' },
  pushEnvironment: { method: 'PUT', path: '/sites/{site_id}/environments', body: 'push-environment', operation: 'environments:push' },
  // Site ids (the theme listing names sites only by display names, which need not be unique).
  listSites: {
    method: 'GET',
    path: '/sites',
    response: 'site-list-response',
    evidence: 'shared/real-service-notes.md, "The company\'s sites": GET /sites?company={id}&include_environments=true',
  },
  restoreBackup: {
    method: 'POST',
    path: '/sites/environments/{target_env_id}/backups/restore',
    body: 'restore-backup',
    operation: 'backups:restore',
    evidence: "the vendor's OpenAPI 1.87.0 (shared/real-service-notes.md, Restore); the spec says a restore endpoint exists without showing it",
  },
  // The real service keeps five manual backups an environment and removes none for you (real-service-notes.md, "Backups and restores").
  deleteBackup: {
    method: 'DELETE',
    path: '/sites/environments/backups/{backup_id}',
    operation: 'backups:delete',
    evidence:
      "the vendor's OpenAPI 1.87.0 (shared/real-service-notes.md, Removing): 202 with an operation; the spec says a remove endpoint exists without showing it",
  },
  // Manual clears are limited to one every 10 s per environment (the vendor's docs): see `perEnvironment`.
  clearCache: {
    method: 'POST',
    path: '/sites/tools/clear-cache',
    body: 'clear-cache',
    operation: 'cache:clear',
    evidence: 'shared/real-service-notes.md, "Clearing a site\'s cache": 202 {operation_id: "cache:clear-…", message, status}',
    perEnvironment: true,
  },
} as const satisfies Record<string, Endpoint>;

export type EndpointName = keyof typeof ENDPOINTS;

/**
 * What each read answers, once its answer schema (`response`) has held it at arrival: a read is
 * typed by its endpoint's name, never by a type its caller picks (test/api/read-answers.test.ts holds every
 * GET of the table to a schema and an entry here).
 */
export interface ReadAnswers {
  listApiKeys: ApiKeyListResponse;
  listThemes: ThemeListResponse;
  listPlugins: PluginListResponse;
  listEnvironmentPlugins: EnvironmentPluginListResponse;
  getLogs: LogsResponse;
  getSshConfig: SshConfig;
  listBackups: BackupListResponse;
  listDomains: DomainListResponse;
  listSites: SiteListResponse;
}

export type ReadEndpoint = keyof ReadAnswers;

/** Whether a call to `name` counts against the service's limit on creating calls. */
export function creates(name: EndpointName | 'getOperation'): boolean {
  return name !== 'getOperation' && (ENDPOINTS[name] as Endpoint).creates === true;
}

/** The service's rules a call may count against: every call's, and creating calls' and log reads' apart. */
export type ServiceRule = 'general' | 'create' | 'logs';

/** The rule of the service a call to `name` counts against beside the general one: creating calls', the logs', or only the general one. */
export function laneOf(name: EndpointName | 'getOperation'): ServiceRule {
  if (name === 'getOperation') return 'general';
  const endpoint = ENDPOINTS[name] as Endpoint;
  return endpoint.creates ? 'create' : (endpoint.ownLimit ?? 'general');
}

/** Whether the service limits calls to `name` per environment as well (see `Endpoint.perEnvironment`). */
export function perEnvironment(name: EndpointName | 'getOperation'): boolean {
  return name !== 'getOperation' && (ENDPOINTS[name] as Endpoint).perEnvironment === true;
}

/** Not in the spec, but offered by the real service: 202 running, 200 done, 500 failed, 404 unknown. */
export const DEFAULT_OPERATION_PATH = '/operations/{operation_id}';

/** Fills `{name}` placeholders, URL-encoding each value. Throws on a missing parameter. */
export function fillPath(template: string, params: Record<string, string>): string {
  return template.replace(/\{([a-z_]+)\}/g, (_, name: string) => {
    const value = params[name];
    if (value === undefined || value === '') throw new Error(`path parameter ${name} is missing for ${template}`);
    // `.` and `..` stay as they are in encodeURIComponent, and a URL resolves them: never a path segment of ours.
    if (value === '.' || value === '..') throw new Error(`path parameter ${name} cannot be ${JSON.stringify(value)}`);
    return encodeURIComponent(value);
  });
}
