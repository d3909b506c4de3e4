import { MalformedResponseError, NotFoundError, ServerError } from '../errors.js';
import { bodyStatus, operationData, operationState, serviceReason } from './answer.js';
import { DEFAULT_OPERATION_PATH, ENDPOINTS, fillPath, type Endpoint, type EndpointName } from './endpoints.js';
import { Transport, type TransportOptions } from './http.js';
import { assertValidBody, assertValidResponse } from './request-schemas.js';
import type * as T from './types.js';

export interface ClientOptions extends TransportOptions {
  /** Path of the operation status endpoint; `{operation_id}` is filled in. */
  operationPath?: string;
}

export interface CallOptions {
  signal?: AbortSignal;
  /** Parameters also sent in the query string (a listing behind a proxy that drops GET bodies). */
  query?: Record<string, string | number>;
}

export interface CallResult {
  status: number;
  data: unknown;
}

/**
 * A typed function for each endpoint of the spec. Every body is checked against its schema in
 * `schemas/api/` first: an invalid request throws RequestValidationError and is never sent.
 */
export class HostingClient {
  readonly transport: Transport;
  readonly #operationPath: string;

  constructor(options: ClientOptions) {
    this.transport = new Transport(options);
    this.#operationPath = options.operationPath ?? DEFAULT_OPERATION_PATH;
  }

  /**
   * The generic call the typed functions and the runner's steps go through. Every body is checked
   * against its schema before it leaves, whoever built it (a plan, a saved plan, a journal).
   */
  async call(name: EndpointName, params: Record<string, string>, body?: unknown, options: CallOptions = {}): Promise<CallResult> {
    const { signal, query } = options;
    const endpoint: Endpoint = ENDPOINTS[name];
    const path = fillPath(endpoint.path, params);
    if (endpoint.body) assertValidBody(endpoint.body, `${endpoint.method} ${endpoint.path}`, body ?? {});
    const search = query ? `?${new URLSearchParams(Object.fromEntries(Object.entries(query).map(([k, v]) => [k, String(v)]))).toString()}` : '';
    const response = await this.transport.send(endpoint.method, path + search, endpoint.body ? (body ?? {}) : undefined, signal);
    if (endpoint.operation) assertAccepted(response, endpoint.method, path);
    if (endpoint.response) assertValidResponse(endpoint.response, endpoint.method, path, response.status, response.data);
    return response;
  }

  async #typed<R>(name: EndpointName, params: Record<string, string>, body?: unknown, check?: (data: unknown) => boolean): Promise<R> {
    const { status, data } = await this.call(name, params, body);
    if (check && !check(data)) {
      const endpoint = ENDPOINTS[name];
      throw new MalformedResponseError(status, endpoint.method, fillPath(endpoint.path, params), 'unexpected shape');
    }
    return data as R;
  }

  listApiKeys(companyId: string) {
    return this.#typed<{ api_keys: T.ApiKey[] }>('listApiKeys', { id: companyId }, undefined, (d) => Array.isArray(obj(d).api_keys));
  }
  listThemes(companyId: string, query: T.ThemeListQuery = {}) {
    return this.#typed<T.ThemeListResponse>('listThemes', { id: companyId }, query, (d) => {
      const themes = obj(obj(obj(d).company).themes);
      return typeof themes.total === 'number' && Array.isArray(themes.items);
    });
  }
  createEnvironment(siteId: string, body: T.CreateEnvironmentBody) {
    return this.#typed<T.Accepted>('createEnvironment', { site_id: siteId }, body);
  }
  addDomain(envId: string, body: T.AddDomainBody) {
    return this.#typed<T.Accepted>('addDomain', { env_id: envId }, body);
  }
  createDnsRecord(domainId: string, body: T.DnsRecordBody) {
    return this.#typed<T.Accepted>('createDnsRecord', { domain_id: domainId }, body);
  }
  cloneEnvironment(siteId: string, body: T.CloneEnvironmentBody) {
    return this.#typed<T.Accepted>('cloneEnvironment', { site_id: siteId }, body);
  }
  getSshConfig(siteId: string, envId: string) {
    return this.#typed<T.SshConfig>('getSshConfig', { site_id: siteId, env_id: envId }, undefined, (d) => typeof obj(d).ssh_command === 'string');
  }
  bulkUpdateThemes(envId: string, body: T.BulkUpdateThemesBody) {
    return this.#typed<T.Accepted>('bulkUpdateThemes', { env_id: envId }, body);
  }
  modifyPhpVersion(body: T.ModifyPhpVersionBody) {
    return this.#typed<T.Accepted>('modifyPhpVersion', {}, body);
  }
  createPlainEnvironment(siteId: string, body: T.CreatePlainEnvironmentBody) {
    return this.#typed<T.Accepted>('createPlainEnvironment', { site_id: siteId }, body);
  }
  createPlainSite(body: T.CreatePlainSiteBody) {
    return this.#typed<T.Accepted>('createPlainSite', {}, body);
  }
  addManualBackup(envId: string, body: T.ManualBackupBody) {
    return this.#typed<T.Accepted>('addManualBackup', { env_id: envId }, body);
  }
  toggleSftpAccounts(envId: string, body: T.ToggleSftpAccountsBody) {
    return this.#typed<T.Accepted>('toggleSftpAccounts', { env_id: envId }, body);
  }
  runWpCliCommand(envId: string, body: T.RunWpCliBody) {
    return this.#typed<T.Accepted>('runWpCliCommand', { env_id: envId }, body);
  }
  listBackups(envId: string) {
    return this.#typed<T.BackupListResponse>('listBackups', { env_id: envId }, undefined, (d) => Array.isArray(obj(obj(d).environment).backups));
  }
  createAdminUser(envId: string, body: T.CreateAdminUserBody) {
    return this.#typed<{ create_wp_admin_user: boolean }>('createAdminUser', { env_id: envId }, body, (d) => typeof obj(d).create_wp_admin_user === 'boolean');
  }
  getLoginUrl(envId: string, body: T.LoginUrlBody) {
    return this.#typed<{ login_link: string }>('getLoginUrl', { env_id: envId }, body, (d) => typeof obj(d).login_link === 'string');
  }
  setDeniedIps(body: T.DeniedIpsBody) {
    return this.#typed<T.NullResult>('setDeniedIps', {}, body, isNullResult);
  }
  setSshExpiration(envId: string, body: T.SshExpirationBody) {
    return this.#typed<T.NullResult>('setSshExpiration', { env_id: envId }, body, isNullResult);
  }
  listDomains(envId: string) {
    return this.#typed<T.DomainListResponse>('listDomains', { env_id: envId }, undefined, (d) => Array.isArray(obj(obj(d).environment).site_domains));
  }
  setSshStatus(envId: string, body: T.SshStatusBody) {
    return this.#typed<T.NullResult>('setSshStatus', { env_id: envId }, body, isNullResult);
  }
  pushEnvironment(siteId: string, body: T.PushEnvironmentBody) {
    return this.#typed<T.Accepted>('pushEnvironment', { site_id: siteId }, body);
  }

  /**
   * Where an operation stands. The body's `status` decides (see answer.ts): the real service answers
   * terminal states with HTTP 200 and the outcome in the body. Without one, the code: 202 running,
   * 200 done; an HTTP 500 is a failure and a 404 an id it does not know (also, for up to a minute,
   * right after the operation started).
   */
  async getOperation(operationId: string, signal?: AbortSignal): Promise<T.OperationStatus> {
    const path = fillPath(this.#operationPath, { operation_id: operationId });
    try {
      const { status, data } = await this.transport.send('GET', path, undefined, signal);
      const state = operationState(status, data);
      const reason = serviceReason(data);
      const told = state === 'succeeded' ? operationData(data, operationId) : undefined;
      return {
        operation_id: operationId,
        state,
        http_status: status,
        ...(reason && { message: reason.message, ...(reason.context !== undefined && { context: reason.context }) }),
        ...(told !== undefined && { data: told }),
      };
    } catch (error) {
      if (error instanceof NotFoundError) return { operation_id: operationId, state: 'not_found', http_status: 404, message: error.serverMessage };
      if (error instanceof ServerError && error.status === 500) {
        return { operation_id: operationId, state: 'failed', http_status: 500, message: error.serverMessage };
      }
      throw error;
    }
  }

  close(): Promise<void> {
    return this.transport.close();
  }
}

function obj(value: unknown): Record<string, unknown> {
  return typeof value === 'object' && value !== null ? (value as Record<string, unknown>) : {};
}

function isNullResult(d: unknown): boolean {
  return 'result' in obj(d);
}

/**
 * An asynchronous endpoint's answer: any 2xx will do (an operation started, or the work done at once:
 * the vendor's document answers theme bulk updates with 200), but one that says it is running (202)
 * must say which operation, or nothing could follow it.
 */
function assertAccepted(response: CallResult, method: string, path: string): void {
  const id = obj(response.data).operation_id;
  const running = (bodyStatus(response.data) ?? response.status) === 202;
  if (id === undefined || id === null ? running : typeof id !== 'string' || id === '') {
    throw new MalformedResponseError(response.status, method, path, 'an answer that says the work is running must carry an operation_id');
  }
}
