import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { useSimulator } from '../helpers/sim.js';
import { call } from './http.js';

const start = useSimulator();

/**
 * The plugins came after the themes: for the same seed, every theme-side answer must stay as it was
 * (tests and saved plans depend on seeds). These hashes were computed on ed9c70e, before plugins.
 */
const BEFORE_PLUGINS = {
  listing: 'a4fd22f9e8eea694932fe2e172c7cf599ec986e9eedd38024a1b07e9d702f75d',
  fleet: '38744b435fd4f7037477100e838c5d569e154f46d0a2c0f6cc0dec725bc12e82',
};

function sha(value: unknown): string {
  return createHash('sha256').update(JSON.stringify(value)).digest('hex');
}

describe('the theme side of a seeded fleet', () => {
  it('answers the theme listing, page by page, and holds the fleet as before plugins', async () => {
    const { sim } = await start({ profile: 'spec', seed: 42, sites: 15, themes: 9, maxPageSize: 4 });
    const pages = [];
    for (const query of ['?offset=0&limit=4', '?offset=4&limit=4', '?offset=8&limit=4', '?column=updatesAvailable', '?status=active&search=a']) {
      const { status, body } = await call(sim, 'GET', `/company/${sim.companyId}/wp-themes${query}`);
      expect(status).toBe(200);
      pages.push(body);
    }
    const fleet = [...sim.fleet.environments.values()].map((e) => [
      e.id,
      e.siteId,
      e.displayName,
      e.phpVersion,
      [...e.themes],
      e.backups.map((b) => [b.id, b.name, b.type, b.note]),
      e.domains.map((d) => d.name),
    ]);
    expect({ listing: sha(pages), fleet: sha([sim.companyId, sim.token, sim.fleet.apiKeys.map((k) => [k.id, k.name, k.status]), fleet]) }).toEqual(
      BEFORE_PLUGINS,
    );
  });
});
