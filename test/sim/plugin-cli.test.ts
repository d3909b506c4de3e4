import { request } from 'undici';
import { describe, expect, it } from 'vitest';
import { runCli, serveSimCli } from '../helpers/cli.js';

describe('sitefleet sim: the plugin flags, end to end', () => {
  it('--plugins-per-env, --plugin-listing no-ids, --no-plugin-bulk-operation-id and --unlicensed-plugin reach the served answers', async () => {
    const { info, stop } = await serveSimCli([
      '--size',
      '2',
      '--plugins-per-env',
      '7',
      '--plugin-listing',
      'no-ids',
      '--no-plugin-bulk-operation-id',
      '--unlicensed-plugin',
      'tablepress',
    ]);
    try {
      const get = async (method: 'GET' | 'PUT', path: string, body?: unknown) => {
        const res = await request(`${info.base_url}/v2${path}`, {
          method,
          headers: { authorization: `Bearer ${info.token}`, ...(body ? { 'content-type': 'application/json' } : {}) },
          body: body ? JSON.stringify(body) : undefined,
        });
        return { status: res.statusCode, body: (await res.body.json()) as any }; // eslint-disable-line @typescript-eslint/no-explicit-any
      };
      const listing = await get('GET', `/company/${info.company_id}/wp-plugins?limit=100`);
      const entries = listing.body.company.plugins.items.flatMap((p: { environments: object[] }) => p.environments);
      for (const e of entries) expect(e).not.toHaveProperty('id');
      const envId = (await get('GET', `/sites?company=${info.company_id}&include_environments=true`)).body.company.sites[0].environments[0].id as string;
      const plugins = (await get('GET', `/sites/environments/${envId}/wp-plugins`)).body.environment.plugins.items as { name: string }[];
      expect(plugins).toHaveLength(7);
      const bulk = await get('PUT', `/sites/environments/${envId}/plugins/bulk-update`, { plugins: [{ name: plugins[0]!.name }] });
      expect(bulk).toEqual({ status: 200, body: { message: 'Successfully updated WP plugins', status: 200 } });
      // --unlicensed-plugin tablepress: its update is answered as done and its version stays.
      const stuck = plugins.find((p) => p.name === 'tablepress') as { name: string; version: string; update_version: string | null } | undefined;
      expect(stuck?.update_version).toBeTruthy();
      await get('PUT', `/sites/environments/${envId}/plugins/bulk-update`, { plugins: [{ name: 'tablepress' }] });
      const after = (await get('GET', `/sites/environments/${envId}/wp-plugins`)).body.environment.plugins.items as { name: string; version: string }[];
      expect(after.find((p) => p.name === 'tablepress')!.version).toBe(stuck!.version);
    } finally {
      expect(await stop()).toBe(0);
    }
  });

  it('`sim --help` documents the plugin flags; a listing mode it does not know is exit 2', async () => {
    const help = await runCli(['sim', '--help']);
    for (const flag of [
      '--plugins-per-env',
      '--plugin-listing',
      '--plugin-listing-lag',
      '--no-plugin-bulk-operation-id',
      '--break-plugin',
      '--unlicensed-plugin',
    ])
      expect(help.stdout).toContain(flag);
    expect((await runCli(['sim', '--plugin-listing', 'sometimes'])).code).toBe(2);
  });
});
