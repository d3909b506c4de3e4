import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, expect, it } from 'vitest';
import { HostingClient } from '../../src/api/client.js';
import type { Theme } from '../../src/api/types.js';
import { MalformedResponseError } from '../../src/errors.js';
import { IncompleteListingError, readInventory, type InventoryReader } from '../../src/inventory/read.js';
import { runCli, simEnv } from '../helpers/cli.js';
import { useSimulator } from '../helpers/sim.js';

const start = useSimulator();

const theme = (name: string): Theme => ({
  name,
  title: name,
  description: '',
  latest_version: '1',
  is_latest_version_vulnerable: false,
  environment_count: 0,
  update_count: 0,
  environments: [],
});

/** A listing of `total` themes that answers `pageFor(offset, inQuery)` → the offset it really serves. */
function listing(
  total: number,
  served: (offset: number, inQuery: boolean) => number,
  pageSize = 5,
): InventoryReader & { asked: { offset: number; inQuery: boolean }[] } {
  const asked: { offset: number; inQuery: boolean }[] = [];
  return {
    asked,
    async listItems(_kind, _company, query, inQuery = false) {
      asked.push({ offset: query.offset, inQuery });
      const from = served(query.offset, inQuery);
      const items = Array.from({ length: Math.max(0, Math.min(pageSize, total - from)) }, (_, i) => theme(`t${from + i}`));
      return { total, last_updated_at: '2026-11-22T00:00:00Z', items };
    },
    listEnvironmentItems() {
      throw new Error('not read here');
    },
    async listSiteEnvironments() {
      return Promise.resolve([]);
    },
    async listDomains() {
      return { environment: { site_domains: [] } };
    },
    async listBackups() {
      return { environment: { backups: [] } };
    },
  };
}

describe('paging through the theme listing', () => {
  it('a listing that ignores the paging in the body is asked again with it in the query string', async () => {
    const reader = listing(16, (offset, inQuery) => (inQuery ? offset : 0));
    const inventory = await readInventory(reader, 'c');
    expect(inventory.listed.theme?.count).toBe(16);
    expect(reader.asked).toEqual([
      { offset: 0, inQuery: false },
      { offset: 5, inQuery: false },
      { offset: 5, inQuery: true },
      { offset: 10, inQuery: true },
      { offset: 15, inQuery: true },
    ]);
  });

  it('a listing that never moves, or ends before its total, stops with an error instead of a partial fleet', async () => {
    await expect(
      readInventory(
        listing(16, () => 0),
        'c',
      ),
    ).rejects.toThrow(IncompleteListingError);
    await expect(
      readInventory(
        listing(16, () => 0),
        'c',
      ),
    ).rejects.toThrow(/does not page: offset 5 answered themes already read.*read 5 of 16/);
    await expect(
      readInventory(
        listing(16, (o) => (o >= 10 ? 99 : o)),
        'c',
      ),
    ).rejects.toThrow(/ended at 10 of its 16 themes/);
  });

  it('against a simulator that drops GET bodies, inventory reads the whole fleet through the query string', async () => {
    const { sim } = await start({ sites: 12, themes: 16, maxPageSize: 5, dropGetBodies: true });
    const result = await runCli(['inventory', '--format', 'json'], simEnv(sim));
    expect(result.code).toBe(0);
    const inventory = JSON.parse(result.stdout) as { environments: { items: { theme?: unknown[] } }[]; listed: { theme?: { count: number } } };
    expect(inventory.listed.theme?.count).toBe(16);
    const rows = inventory.environments.reduce((n, e) => n + (e.items.theme?.length ?? 0), 0);
    const expected = [...sim.fleet.environments.values()].reduce((n, e) => n + e.themes.size, 0);
    expect(rows).toBe(expected);
    expect(sim.log.filter((e) => e.path.endsWith('/wp-themes')).length).toBeGreaterThan(16 / 5);
  });

  it('a listing missing a field the runner relies on is an error naming the field', async () => {
    const bad = {
      company: {
        themes: {
          total: 1,
          last_updated_at: 'x',
          items: [{ name: 'a', environments: [{ id: 'e', site_display_name: 's', theme_version: '1', theme_update: 'none' }] }],
        },
      },
    };
    const server = createServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify(bad));
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const client = new HostingClient({ baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, token: 't' });
    try {
      const error = await client.call('listThemes', { id: 'c' }, { offset: 0, limit: 10 }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(MalformedResponseError);
      expect((error as Error).message).toMatch(/response\.company\.themes\.items\.0\.environments\.0\.display_name: .*required/);
    } finally {
      await client.close();
      await new Promise((r) => server.close(r));
    }
  });
});
