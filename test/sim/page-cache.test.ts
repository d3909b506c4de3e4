import { describe, expect, it } from 'vitest';
import { request } from 'undici';
import { call, operation } from './http.js';
import { runCli } from '../helpers/cli.js';
import { useSimulator } from '../helpers/sim.js';
import { CLEAR_CACHE_GAP_MS } from '../../src/sim/page-cache.js';
import type { Simulator } from '../../src/sim/server.js';

const start = useSimulator();

async function page(url: string, headers: Record<string, string> = {}): Promise<{ status: number; text: string }> {
  const res = await request(url, { headers });
  return { status: res.statusCode, text: await res.body.text() };
}

/** A live environment and its front page's URL. */
function liveSite(sim: Simulator): { envId: string; url: string; theme: string } {
  const env = [...sim.fleet.environments.values()].find((e) => e.displayName === 'live' && e.themes.size > 0 && e.domains.length > 0)!;
  return { envId: env.id, url: sim.siteUrl.replace('{{domain}}', env.domains[0]!.name), theme: [...env.themes.keys()][0]! };
}

/** Breaks the site the way an update would: its installed theme's version now breaks pages. */
function breakIt(sim: Simulator, envId: string, theme: string): void {
  sim.breakTheme(`${theme}@${sim.fleet.environments.get(envId)!.themes.get(theme)!.version}`);
}

const CRITICAL = 'There has been a critical error on this website.';

describe('the simulator’s page cache (what visitors see in front of a site)', () => {
  it('keeps serving the page as it was after the site broke, whatever the query string or headers say', async () => {
    const { sim } = await start({ seed: 4 });
    const { envId, url, theme } = liveSite(sim);
    expect((await page(url)).status).toBe(200);
    breakIt(sim, envId, theme);
    for (const [u, headers] of [
      [url, {}],
      [`${url}?nocache=${Date.now()}`, {}],
      [url, { 'cache-control': 'no-cache', pragma: 'no-cache' }],
    ] as const) {
      const seen = await page(u, headers);
      expect(seen.status).toBe(200);
      expect(seen.text).not.toContain(CRITICAL);
    }
    expect(sim.siteLog.map((e) => [e.status, e.cached ?? false])).toEqual([
      [200, false],
      [200, true],
      [200, true],
      [200, true],
    ]);
  });

  it('a clear-cache operation empties it once it completes; a server error is never kept', async () => {
    let now = 1_000_000;
    const { sim } = await start({ seed: 4, now: () => now, operationDelayMs: 500 });
    const { envId, url, theme } = liveSite(sim);
    await page(url);
    breakIt(sim, envId, theme);
    const accepted = await call(sim, 'POST', '/sites/tools/clear-cache', { environment_id: envId });
    expect(accepted).toMatchObject({ status: 202, body: { status: 202, operation_id: expect.stringMatching(/^cache:clear-/) } });
    expect((await page(url)).status).toBe(200); // the operation is still running
    now += 500;
    expect((await operation(sim, accepted.body.operation_id as string)).status).toBe(200);
    for (let i = 0; i < 2; i++) expect(await page(url)).toMatchObject({ status: 500, text: expect.stringContaining(CRITICAL) });
    expect(sim.siteLog.at(-1)!.cached).toBeUndefined();
  });

  it('a kept page expires after its time; a theme update alone does not purge it', async () => {
    let now = 1_000_000;
    const { sim } = await start({ seed: 4, now: () => now, pageCacheTtlMs: 60_000 });
    const { envId, url, theme } = liveSite(sim);
    await page(url);
    breakIt(sim, envId, theme);
    now += 59_999;
    expect((await page(url)).status).toBe(200);
    now += 1;
    expect((await page(url)).status).toBe(500);
  });

  it('manual clears of one environment are one per 10 s: sooner is a 429 with Retry-After; another environment is not held up', async () => {
    let now = 1_000_000;
    const { sim } = await start({ seed: 4, now: () => now, clearCacheGapMs: CLEAR_CACHE_GAP_MS });
    const envs = [...sim.fleet.environments.values()].slice(0, 2).map((e) => e.id);
    expect((await call(sim, 'POST', '/sites/tools/clear-cache', { environment_id: envs[0] })).status).toBe(202);
    now += 4_000;
    const res = await request(`${sim.baseUrl}/v2/sites/tools/clear-cache`, {
      method: 'POST',
      headers: { authorization: `Bearer ${sim.token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ environment_id: envs[0] }),
    });
    expect(res.statusCode).toBe(429);
    expect(res.headers['retry-after']).toBe('6');
    await res.body.dump();
    expect((await call(sim, 'POST', '/sites/tools/clear-cache', { environment_id: envs[1] })).status).toBe(202);
    now += 6_000;
    expect((await call(sim, 'POST', '/sites/tools/clear-cache', { environment_id: envs[0] })).status).toBe(202);
    expect((await call(sim, 'POST', '/sites/tools/clear-cache', { environment_id: 'not-a-uuid' })).status).toBe(400);
  });

  it('a TTL of 0 is no cache at all; `sim --page-cache-ttl` takes whole milliseconds (exit 2 otherwise)', async () => {
    const { sim } = await start({ seed: 4, pageCacheTtlMs: 0 });
    const { envId, url, theme } = liveSite(sim);
    expect((await page(url)).status).toBe(200);
    breakIt(sim, envId, theme);
    expect((await page(url)).status).toBe(500);
    const bad = await runCli(['sim', '--size', '2', '--page-cache-ttl', '1.5']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('--page-cache-ttl takes a whole number from 0 to');
  });
});
