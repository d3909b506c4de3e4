import { describe, expect, it } from 'vitest';
import { ENDPOINTS, type Endpoint, type ReadEndpoint } from '../../src/api/endpoints.js';
import { MalformedResponseError } from '../../src/errors.js';
import { answering } from '../helpers/fixed-answer.js';
import { Caller } from '../../src/run/caller.js';
import { silent } from '../helpers/run.js';

/** Every read the table names, as the answer map knows them: a GET missing here fails the type check below. */
const READS = { listApiKeys: true, listThemes: true, getSshConfig: true, listBackups: true, listDomains: true } satisfies Record<ReadEndpoint, true>;
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
