import { describe, expect, it } from 'vitest';
import { ENDPOINTS, type Endpoint, type ReadEndpoint } from '../../src/api/endpoints.js';
import { MalformedResponseError } from '../../src/errors.js';
import { answering } from '../helpers/fixed-answer.js';
import { Caller } from '../../src/run/caller.js';
import { silent } from '../helpers/run.js';

/** Every read the table names, as the answer map knows them: a GET missing here fails the type check below. */
const READS = {
  listApiKeys: true,
  listThemes: true,
  listPlugins: true,
  listEnvironmentPlugins: true,
  getLogs: true,
  getSshConfig: true,
  listBackups: true,
  listDomains: true,
  listSites: true,
} satisfies Record<ReadEndpoint, true>;
const COMPANY = '0f1e2d3c-4b5a-4697-8877-665544332211';

describe('typed reads: each answer is held to its schema where it arrives', () => {
  it('every GET of the endpoint table has an answer schema and an answer type', () => {
    const gets = Object.entries(ENDPOINTS as Record<string, Endpoint>).filter(([, e]) => e.method === 'GET');
    expect(gets.filter(([, e]) => !e.response).map(([name]) => name)).toEqual([]);
    expect(gets.map(([name]) => name).sort()).toEqual(Object.keys(READS).sort());
  });

  it('an API-key list without its array ends in a typed error naming the call and the field, not a TypeError later', async () => {
    const server = await answering(200, { api_keys: { id: 'k' } });
    try {
      const caller = new Caller(server.client, { logger: silent });
      const read = caller.read('listApiKeys', { id: COMPANY });
      await expect(read).rejects.toBeInstanceOf(MalformedResponseError);
      await expect(read).rejects.toThrow(/GET \/company\/.*\/api-keys.*api_keys/);
    } finally {
      await server.close();
    }
  });

  // An answer its readers could not use (a list or a count missing) is refused by `call` itself, by the
  // endpoint's answer schema: the check holds for every way a read is made, not only through `Caller.read`.
  it.each([
    ['listThemes', { id: COMPANY }, { company: { themes: { items: [] } } }, /GET \/company\/.*\/wp-themes .*response\.company\.themes\.total: is required/],
    [
      'listThemes',
      { id: COMPANY },
      { company: { themes: { total: 0, items: {} } } },
      /GET \/company\/.*\/wp-themes .*response\.company\.themes\.items: must be array/,
    ],
    [
      'listBackups',
      { env_id: COMPANY },
      { environment: { display_name: 'live' } },
      /GET \/sites\/environments\/.*\/backups .*response\.environment\.backups: is required/,
    ],
    [
      'listDomains',
      { env_id: COMPANY },
      { environment: { site_domains: null } },
      /GET \/sites\/environments\/.*\/domains .*response\.environment\.site_domains: must be array/,
    ],
    ['getSshConfig', { site_id: COMPANY, env_id: COMPANY }, {}, /GET \/sites\/.*\/ssh\/config .*response\.host: is required/],
  ] as const)('%s: an answer without what the reads rely on is a MalformedResponseError from call', async (name, params, answer, names) => {
    const server = await answering(200, answer);
    try {
      const error = await server.client.call(name, params).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(MalformedResponseError);
      expect((error as Error).message).toMatch(names);
    } finally {
      await server.close();
    }
  });

  it('a well-formed list is typed by the endpoint alone (no type argument, no cast)', async () => {
    const server = await answering(200, { api_keys: [{ id: 'k', name: null, status: 'active', expires_at: null }] });
    try {
      const { api_keys } = await new Caller(server.client, { logger: silent }).read('listApiKeys', { id: COMPANY });
      expect(api_keys[0]!.status).toBe('active');
    } finally {
      await server.close();
    }
  });
});
