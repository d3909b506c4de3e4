import { request } from 'undici';
import { describe, expect, it } from 'vitest';
import { resolveBaseUrl } from '../../src/api/base-url.js';
import { HostingClient } from '../../src/api/client.js';
import { ENDPOINTS } from '../../src/api/endpoints.js';
import { parseRetryAfter } from '../../src/api/retry-after.js';
import {
  AuthenticationError,
  HttpError,
  MalformedResponseError,
  NetworkError,
  NotFoundError,
  RateLimitError,
  ServerError,
  SitefleetError,
  TimeoutError,
} from '../../src/errors.js';
import { operationOf } from '../helpers/calls.js';
import { useSimulator } from '../helpers/sim.js';

const start = useSimulator();
const ENV = '6f1c3e4a-8b2d-4c1e-9a7f-0123456789ab';

describe('every fault class surfaces as its typed error', () => {
  it('401 for a wrong token is an AuthenticationError without the token in its message', async () => {
    const { sim } = await start();
    const client = new HostingClient({ baseUrl: sim.baseUrl, token: 'wrong-token-value' });
    const error = await client.call('listApiKeys', { id: sim.companyId }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(AuthenticationError);
    expect((error as AuthenticationError).status).toBe(401);
    expect(String((error as Error).message)).not.toContain('wrong-token-value');
    expect(String((error as Error).message)).not.toContain(sim.token);
    await client.close();
  });

  it('404 for an unknown id is a NotFoundError carrying method, path and the server message', async () => {
    const { client } = await start();
    const error = (await client.call('listBackups', { env_id: ENV }).catch((e: unknown) => e)) as NotFoundError;
    expect(error).toBeInstanceOf(NotFoundError);
    expect([error.status, error.method, error.path]).toEqual([404, 'GET', `/sites/environments/${ENV}/backups`]);
    expect(error.serverMessage).toContain(ENV);
  });

  it('400 from the server is an HttpError with its message (the server checks what the schema cannot)', async () => {
    const { sim, client } = await start();
    const env = [...sim.fleet.environments.values()][0]!;
    const error = (await client.call('modifyPhpVersion', {}, { environment_id: env.id, php_version: '5.6' }).catch((e: unknown) => e)) as HttpError;
    expect(error).toBeInstanceOf(HttpError);
    expect(error.status).toBe(400);
    expect(error.serverMessage).toMatch(/php_version/);
  });

  it.each([
    ['500', ServerError],
    ['502', ServerError],
    ['503', ServerError],
  ] as const)('%s is a ServerError', async (fault, type) => {
    const { sim, client } = await start({ faults: `${fault}=1` });
    const error = (await client.call('listApiKeys', { id: sim.companyId }).catch((e: unknown) => e)) as ServerError;
    expect(error).toBeInstanceOf(type);
    expect(error.status).toBe(Number(fault));
  });

  it('429 is a RateLimitError with Retry-After parsed to ms, and the limit is a sliding window', async () => {
    const { sim, client } = await start({ rate: '3/min' });
    for (let i = 0; i < 3; i++) await client.call('listApiKeys', { id: sim.companyId });
    const error = (await client.call('listApiKeys', { id: sim.companyId }).catch((e: unknown) => e)) as RateLimitError;
    expect(error).toBeInstanceOf(RateLimitError);
    expect(error.serverMessage).toBe('Too many requests, please try again later.');
    expect(error.retryAfterMs).toBeGreaterThan(50_000);
    expect(error.retryAfterMs).toBeLessThanOrEqual(60_000);
    expect(sim.log.map((e) => e.status)).toEqual([200, 200, 200, 429]);
  });

  it('a connection reset is a NetworkError that may have reached the server', async () => {
    const { sim, client } = await start({ faults: 'reset=1' });
    const error = (await client.call('listApiKeys', { id: sim.companyId }).catch((e: unknown) => e)) as NetworkError;
    expect(error).toBeInstanceOf(NetworkError);
    expect(error.mayHaveReached).toBe(true);
  });

  it('an answer lost after the write was applied is a NetworkError, and the write did happen', async () => {
    const { sim, client } = await start({ faults: 'lost=1', operationDelayMs: 0 });
    const env = [...sim.fleet.environments.values()][0]!;
    const error = await client.call('setSshStatus', { env_id: env.id }, { is_enabled: false }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(NetworkError);
    expect(env.sshEnabled).toBe(false);
    expect(sim.log[0]).toMatchObject({ fault: 'lost', changed: true });
  });

  it('a truncated JSON body is a MalformedResponseError', async () => {
    const { sim, client } = await start({ faults: 'malformed=1' });
    const error = (await client.call('listApiKeys', { id: sim.companyId }).catch((e: unknown) => e)) as MalformedResponseError;
    expect(error).toBeInstanceOf(MalformedResponseError);
    expect(error.status).toBe(200);
  });

  it('a slow answer past the headers timeout is a TimeoutError', async () => {
    // The answer comes long after the timeout: a loaded machine may fire a 200 ms timer late, never by seconds.
    const { sim } = await start({ faults: 'slow=1', slowMs: 5000 });
    const client = new HostingClient({ baseUrl: sim.baseUrl, token: sim.token, headersTimeoutMs: 200 });
    const error = (await client.call('listApiKeys', { id: sim.companyId }).catch((e: unknown) => e)) as TimeoutError;
    expect(error).toBeInstanceOf(TimeoutError);
    expect(error.phase).toBe('headers');
    expect(error.mayHaveReached).toBe(true);
    await client.close();
  });

  it('a refused connection is a NetworkError that certainly never reached the server', async () => {
    const { sim } = await start();
    const baseUrl = sim.baseUrl;
    await sim.stop();
    const client = new HostingClient({ baseUrl, token: 't' });
    const error = (await client.call('listApiKeys', { id: sim.companyId }).catch((e: unknown) => e)) as NetworkError;
    expect(error).toBeInstanceOf(NetworkError);
    expect(error.mayHaveReached).toBe(false);
    await client.close();
  });
});

describe('operation lifecycle', () => {
  it('is not_found until visible, in_progress, then succeeded; unknown ids are not_found', async () => {
    let now = Date.now();
    const { sim, client } = await start({ operationDelayMs: 300, operationVisibleAfterMs: 100, now: () => now });
    const env = [...sim.fleet.environments.values()][0]!;
    const operation_id = operationOf(await client.call('addManualBackup', { env_id: env.id }, { tag: 'a' }));
    expect((await client.getOperation(operation_id)).state).toBe('not_found');
    now += 150;
    expect(await client.getOperation(operation_id)).toMatchObject({ state: 'in_progress', http_status: 202 });
    now += 250;
    expect(await client.getOperation(operation_id)).toMatchObject({ state: 'succeeded', http_status: 200 });
    expect((await client.getOperation('backups:add-manual-00000000-0000-4000-8000-000000000000')).state).toBe('not_found');
  });

  it('a second write to a busy environment is accepted, then fails as blocked by another process', async () => {
    let now = Date.now();
    const { sim, client } = await start({ operationDelayMs: 300, now: () => now });
    const env = [...sim.fleet.environments.values()][0]!;
    const first = operationOf(await client.call('addManualBackup', { env_id: env.id }, { tag: 'first' }));
    const second = await client.call('runWpCliCommand', { env_id: env.id }, { wp_command: 'wp cache flush' });
    expect(second.data).toMatchObject({ status: 202 });
    expect(await client.getOperation(operationOf(second))).toMatchObject({
      state: 'failed',
      http_status: 500,
      message: 'The environment is blocked by another process',
    });
    now += 350;
    expect((await client.getOperation(first)).state).toBe('succeeded');
    expect(env.wpCommands).toEqual([]);
  });
});

describe('simulator strictness (raw requests with the spec paths)', () => {
  async function raw(sim: { baseUrl: string; token: string }, method: string, path: string, body?: string, headers: Record<string, string> = {}) {
    const res = await request(`${sim.baseUrl}/v2${path}`, {
      method: method as 'GET',
      headers: { authorization: `Bearer ${sim.token}`, ...(body ? { 'content-type': 'application/json' } : {}), ...headers },
      body,
    });
    return { status: res.statusCode, body: (await res.body.json()) as { status: number; message: string } };
  }

  it('answers 401 without a bearer token, 415 without JSON content type, 400 naming the field, 404 for unknown ids', async () => {
    const { sim } = await start();
    const env = [...sim.fleet.environments.values()][0]!;
    const noAuth = await request(`${sim.baseUrl}/v2/company/${sim.companyId}/api-keys`);
    expect(noAuth.statusCode).toBe(401);
    expect(await noAuth.body.json()).toMatchObject({ status: 401 });
    const noType = await raw(sim, 'POST', `/sites/environments/${env.id}/manual-backups`, '{"tag":"x"}', { 'content-type': 'text/plain' });
    expect(noType.status).toBe(415);
    const bad = await raw(sim, 'POST', `/sites/environments/${env.id}/run-wp-cli-command`, JSON.stringify({ wp_command: 'wp db drop; echo' }));
    expect(bad.status).toBe(400);
    expect(bad.body.message).toMatch(/^wp_command: /);
    const unknownField = await raw(
      sim,
      'PUT',
      `/sites/tools/modify-php-version`,
      JSON.stringify({ environment_id: env.id, php_version: '8.2', colour: 'red' }),
    );
    expect([unknownField.status, unknownField.body.message]).toEqual([400, 'colour: is not a known field']);
    const wrongType = await raw(sim, 'POST', `/sites/environments/${env.id}/ssh/set-status`, JSON.stringify({ is_enabled: 'true' }));
    expect([wrongType.status, wrongType.body.message]).toEqual([400, 'is_enabled: must be boolean']);
    const missing = await raw(sim, 'PUT', `/sites/tools/denied-ips`, JSON.stringify({ environment_id: env.id }));
    expect([missing.status, missing.body.message]).toEqual([400, 'ip_list: is required']);
    const unknownEnv = await raw(sim, 'GET', `/sites/environments/${ENV}/domains`);
    expect(unknownEnv.status).toBe(404);
    expect(sim.log.filter((e) => e.changed)).toEqual([]);
  });

  it('serves every endpoint of the spec at its literal path and method', async () => {
    const literal: [string, string][] = [
      ['GET', '/company/{id}/api-keys'],
      ['GET', '/company/{id}/wp-themes'],
      ['POST', '/sites/{site_id}/environments'],
      ['POST', '/sites/environments/{env_id}/domains'],
      ['POST', '/domains/{domain_id}/dns-records'],
      ['POST', '/sites/{site_id}/environments/clone'],
      ['GET', '/sites/{site_id}/environments/{env_id}/ssh/config'],
      ['PUT', '/sites/environments/{env_id}/themes/bulk-update'],
      ['PUT', '/sites/tools/modify-php-version'],
      ['POST', '/sites/{site_id}/environments/plain'],
      ['POST', '/sites/plain'],
      ['POST', '/sites/environments/{env_id}/manual-backups'],
      ['PUT', '/sites/environments/{env_id}/additional-sftp-accounts/toggle-status'],
      ['POST', '/sites/environments/{env_id}/run-wp-cli-command'],
      ['GET', '/sites/environments/{env_id}/backups'],
      ['POST', '/sites/environments/{env_id}/wpa-create-user'],
      ['POST', '/sites/environments/{env_id}/wpa-login-url'],
      ['PUT', '/sites/tools/denied-ips'],
      ['POST', '/sites/environments/{env_id}/ssh/change-expiration-interval'],
      ['GET', '/sites/environments/{env_id}/domains'],
      ['POST', '/sites/environments/{env_id}/ssh/set-status'],
      ['PUT', '/sites/{site_id}/environments'],
    ];
    expect(
      Object.values(ENDPOINTS)
        .filter((e) => !('evidence' in e))
        .map((e) => [e.method, e.path])
        .sort(),
    ).toEqual([...literal].sort());
  });
});

describe('base URL and Retry-After', () => {
  it('appends /v2 once, and refuses plain http except on loopback', () => {
    expect(resolveBaseUrl('https://api.example.com')).toEqual({ origin: 'https://api.example.com', prefix: '/v2' });
    expect(resolveBaseUrl('https://api.example.com/v2/')).toEqual({ origin: 'https://api.example.com', prefix: '/v2' });
    expect(resolveBaseUrl('https://api.example.com/hosting')).toEqual({ origin: 'https://api.example.com', prefix: '/hosting/v2' });
    expect(resolveBaseUrl('http://127.0.0.1:8080').prefix).toBe('/v2');
    expect(resolveBaseUrl('http://localhost:8080').prefix).toBe('/v2');
    expect(resolveBaseUrl('http://[::1]:8080').prefix).toBe('/v2');
    expect(() => resolveBaseUrl('http://api.example.com')).toThrow(SitefleetError);
    expect(() => resolveBaseUrl('ftp://api.example.com')).toThrow(/https/);
    expect(() => resolveBaseUrl('api.example.com')).toThrow(/not a URL/);
  });

  it('parses seconds and HTTP dates', () => {
    const now = Date.parse('2026-11-22T10:00:00Z');
    expect(parseRetryAfter('120', now)).toBe(120_000);
    expect(parseRetryAfter('Sun, 22 Nov 2026 10:00:30 GMT', now)).toBe(30_000);
    expect(parseRetryAfter('Sun, 22 Nov 2026 09:00:00 GMT', now)).toBe(0);
    expect(parseRetryAfter('soon', now)).toBeUndefined();
    expect(parseRetryAfter(undefined, now)).toBeUndefined();
  });
});
