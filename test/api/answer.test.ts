import { describe, expect, it } from 'vitest';
import { operationState, writeAnswer } from '../../src/api/answer.js';
import { readInventory } from '../../src/inventory/read.js';
import { MalformedResponseError, RateLimitError } from '../../src/errors.js';
import { operationOf, read } from '../helpers/calls.js';
import { answering } from '../helpers/fixed-answer.js';
import { useSimulator } from '../helpers/sim.js';

const start = useSimulator();

describe('what an answer means: the body first, the HTTP code when the body says nothing', () => {
  it('an operation answer is judged by its body status', () => {
    expect(operationState(200, { status: 500, message: 'PHP change failed' })).toBe('failed');
    expect(operationState(200, { status: 422, message: 'bad' })).toBe('failed');
    expect(operationState(200, { status: 202, message: 'running' })).toBe('in_progress');
    expect(operationState(200, { status: 404, message: 'not yet' })).toBe('not_found');
    expect(operationState(200, { status: 200, message: 'done' })).toBe('succeeded');
    expect(operationState(202, { status: 200 })).toBe('succeeded');
    // No status in the body (or not a number): the HTTP code decides.
    expect(operationState(202, { message: 'running' })).toBe('in_progress');
    expect(operationState(200, { status: '500' })).toBe('succeeded');
    expect(operationState(200, undefined)).toBe('succeeded');
  });

  it('a write answer: an operation id means accepted (202 or not), a failing body status means refused, else done', () => {
    expect(writeAnswer({ status: 202, operation_id: 'php:modify-version-1' })).toEqual({ kind: 'accepted', operationId: 'php:modify-version-1' });
    expect(writeAnswer({ status: 200, message: 'Successfully updated WP themes', operation_id: 'x-1' })).toEqual({ kind: 'accepted', operationId: 'x-1' });
    expect(writeAnswer({ status: 200, message: 'Successfully updated WP themes' })).toEqual({ kind: 'done' });
    expect(writeAnswer({ result: null })).toEqual({ kind: 'done' });
    expect(writeAnswer({ status: 500, message: 'nope', operation_id: 'x-2' })).toEqual({ kind: 'refused', status: 500, reason: { message: 'nope' } });
    expect(writeAnswer({ operation_id: '' })).toEqual({ kind: 'done' });
  });
});

describe('asynchronous endpoints answered at once', () => {
  const env = '00000000-0000-4000-8000-000000000000';

  it('a 403 or 503 whose message says "too many requests" is a rate limit (sent again after Retry-After), a 500 saying so is not', async () => {
    for (const [status, limited] of [
      [403, true],
      [503, true],
      [500, false],
    ] as const) {
      const server = await answering(status, { status, message: 'Too many requests, please try again later.' });
      try {
        const error = await server.client.call('listBackups', { env_id: env }).catch((e: unknown) => e);
        expect(error instanceof RateLimitError, `HTTP ${status}`).toBe(limited);
      } finally {
        await server.close();
      }
    }
  });

  it('a 200 without an operation id is accepted (the work is done); a 202 without one is not what the API promises', async () => {
    const done = await answering(200, { status: 200, message: 'Successfully updated WP themes' });
    try {
      await expect(done.client.call('bulkUpdateThemes', { env_id: env }, { themes: [{ name: 'x' }] })).resolves.toMatchObject({
        status: 200,
        data: { status: 200 },
      });
    } finally {
      await done.close();
    }
    const running = await answering(202, { status: 202, message: 'in progress' });
    try {
      await expect(running.client.call('bulkUpdateThemes', { env_id: env }, { themes: [{ name: 'x' }] })).rejects.toBeInstanceOf(MalformedResponseError);
    } finally {
      await running.close();
    }
  });
});

describe('the simulator with the real profile, read by the client', () => {
  it('terminal operation states come back as HTTP 200 with the outcome in the body, and are read by it', async () => {
    const { sim, client } = await start({ profile: 'real', failOperations: 1, operationVisibleAfterMs: 0, operationDelayMs: 0 });
    const env = [...sim.fleet.environments.values()][0]!;
    const accepted = await client.call('modifyPhpVersion', {}, { environment_id: env.id, php_version: '8.3' });
    const status = await client.getOperation(operationOf(accepted));
    expect(status.http_status).toBe(200);
    expect(status.state).toBe('failed');
    expect(status.message).toMatch(/failed/);
    expect(env.phpVersion).not.toBe('8.3'); // a failed operation changed nothing
  });

  it('the spec profile says the same failure with HTTP 500', async () => {
    const { sim, client } = await start({ failOperations: 1, operationDelayMs: 0 });
    const env = [...sim.fleet.environments.values()][0]!;
    const accepted = await client.call('modifyPhpVersion', {}, { environment_id: env.id, php_version: '8.3' });
    expect(await client.getOperation(operationOf(accepted))).toMatchObject({ state: 'failed', http_status: 500 });
  });

  it('theme bulk updates answered 200, null theme_update and the vendor’s DNS flag are all accepted', async () => {
    const { sim, client } = await start({ profile: 'real', createRate: '100/s' });
    const listing = await read(client, 'listThemes', { id: sim.companyId }, { offset: 0, limit: 100 });
    const entries = listing.company.themes.items.flatMap((t) => t.environments.map((e) => ({ theme: t.name, e })));
    expect(entries.some(({ e }) => e.theme_update === null)).toBe(true);
    const inventory = await readInventory(
      {
        listItems: async (_kind, c, q) => (await read(client, 'listThemes', { id: c }, q)).company.themes,
        listEnvironmentItems: async (_kind, id) => (await read(client, 'listEnvironmentPlugins', { env_id: id })).environment.plugins.items,
        listSiteEnvironments: () => Promise.resolve([]),
        listDomains: (id) => read(client, 'listDomains', { env_id: id }),
        listBackups: (id) => read(client, 'listBackups', { env_id: id }),
      },
      sim.companyId,
    );
    const withUpdate = entries.filter(({ e }) => e.theme_update === 'available').length;
    expect(inventory.environments.flatMap((e) => e.items.theme ?? []).filter((t) => t.update_available)).toHaveLength(withUpdate);
    const pending = entries.find(({ e }) => e.theme_update === 'available')!;
    const answer = await client.call('bulkUpdateThemes', { env_id: pending.e.id }, { themes: [{ name: pending.theme }] });
    expect(answer.data).toMatchObject({ status: 200 });
    expect(operationOf(answer)).toMatch(/^wp-themes:bulk-update-/);
    const withDomains = [...sim.fleet.environments.values()].find((e) => e.domains.length > 0)!;
    const domains = (await read(client, 'listDomains', { env_id: withDomains.id })).environment.site_domains;
    expect(domains[0]).toHaveProperty('uses_cloudflare_dns');
    expect(domains[0]).not.toHaveProperty('uses_provider_dns');
  });

  it('creating calls have a window of their own: the sixth backup in a period is refused while reads go through', async () => {
    const { sim, client } = await start({ profile: 'real', rate: '100/min' });
    const env = [...sim.fleet.environments.values()][0]!;
    for (let i = 0; i < 5; i++) await client.call('addManualBackup', { env_id: env.id }, { tag: `t${i}` });
    await expect(client.call('addManualBackup', { env_id: env.id }, { tag: 't5' })).rejects.toBeInstanceOf(RateLimitError);
    await expect(client.call('listBackups', { env_id: env.id })).resolves.toBeDefined();
  });
});
