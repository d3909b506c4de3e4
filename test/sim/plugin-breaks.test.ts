import { describe, expect, it } from 'vitest';
import { request } from 'undici';
import type { Simulator } from '../../src/sim/server.js';
import { KEPT_LOG_LINES } from '../../src/sim/site-logs.js';
import { runCli } from '../helpers/cli.js';
import { useSimulator } from '../helpers/sim.js';
import { call, runToEnd } from './http.js';

const start = useSimulator();

async function status(sim: Simulator, domain: string): Promise<number> {
  const res = await request(sim.siteUrl.replace('{{domain}}', domain));
  await res.body.dump();
  return res.statusCode;
}

function logs(sim: Simulator, envId: string, query: string) {
  return call(sim, 'GET', `/sites/environments/${envId}/logs${query}`);
}

describe('a plugin that breaks a site, and the logs that say which', () => {
  it('--break-plugin NAME@VERSION: sites where that version is active answer 500, and their error log names the plugin’s file', async () => {
    const { sim } = await start({ seed: 21, sites: 8, pageCacheTtlMs: 0 });
    const env = [...sim.fleet.environments.values()].find((e) => [...e.plugins.values()].some((p) => p.status === 'active'))!;
    const [slug, plugin] = [...env.plugins].find(([, p]) => p.status === 'active')!;
    expect(sim.breakPlugin(`${slug}@${plugin.version}`)).toBe(`${slug}@${plugin.version}`);
    for (const e of sim.fleet.environments.values()) {
      const runs = e.plugins.get(slug)?.version === plugin.version && e.plugins.get(slug)?.status === 'active';
      expect(await status(sim, e.domains[0]!.name)).toBe(runs ? 500 : 200);
      const error = (await logs(sim, e.id, '?file_name=error&lines=20')).body.environment.container_info.logs as string;
      expect(error.includes(`/wp-content/plugins/${slug}/${slug}.php:123`)).toBe(runs);
    }
    const error = (await logs(sim, env.id, '?file_name=error&lines=6')).body.environment.container_info.logs as string;
    const lines = error.split('\n');
    expect(lines[0]).toMatch(
      new RegExp(
        `^\\[\\d{2}-[A-Z][a-z]{2}-\\d{4} \\d{2}:\\d{2}:\\d{2} UTC\\] PHP Fatal error:  Uncaught Error: Call to undefined function .+\\(\\) in /www/[a-z0-9]+_\\d+/public/wp-content/plugins/${slug}/${slug}\\.php:123$`,
      ),
    );
    expect(lines[1]).toBe('Stack trace:');
    expect(lines[2]).toMatch(/^#0 \/www\/.+\/wp-settings\.php\(\d+\): include_once\(\)$/);
    // The access log holds the page requests, the last one the 500.
    expect((await logs(sim, env.id, '?file_name=access&lines=1')).body.environment.container_info.logs).toMatch(/"GET \/ HTTP\/1\.1" 500 \d+/);
  });

  it('--quiet-breaks: the broken site answers 500 all the same, and its error log names nothing (logging off, a breakage from elsewhere)', async () => {
    const { sim } = await start({ seed: 21, sites: 8, pageCacheTtlMs: 0, quietBreaks: true });
    const env = [...sim.fleet.environments.values()].find((e) => [...e.plugins.values()].some((p) => p.status === 'active'))!;
    const [slug, plugin] = [...env.plugins].find(([, p]) => p.status === 'active')!;
    sim.breakPlugin(`${slug}@${plugin.version}`);
    expect(await status(sim, env.domains[0]!.name)).toBe(500);
    expect((await logs(sim, env.id, '?file_name=error&lines=20')).body.environment.container_info.logs).not.toMatch(/Fatal/);
    // The flag as `sitefleet sim` takes it.
    expect((await runCli(['sim', '--help'], {})).stdout).toContain('--quiet-breaks');
  });

  it('an inactive plugin at the broken version breaks nothing; updating away from the broken version heals the site', async () => {
    const { sim } = await start({ seed: 22, sites: 8, pageCacheTtlMs: 0 });
    const env = [...sim.fleet.environments.values()].find((e) =>
      [...e.plugins].some(([name, p]) => p.version !== sim.fleet.pluginCatalog.get(name)!.versions.at(-1)),
    )!;
    const [slug, plugin] = [...env.plugins].find(([name, p]) => p.version !== sim.fleet.pluginCatalog.get(name)!.versions.at(-1))!;
    sim.breakPlugin(`${slug}@${plugin.version}`);
    const domain = env.domains[0]!.name;
    plugin.status = 'inactive';
    expect(await status(sim, domain)).toBe(200);
    plugin.status = 'active';
    expect(await status(sim, domain)).toBe(500);
    await runToEnd(sim, 'PUT', `/sites/environments/${env.id}/plugins/bulk-update`, { plugins: [{ name: slug }] });
    expect(await status(sim, domain)).toBe(200);
    expect(() => sim.breakPlugin('no-such-plugin@latest')).toThrow(/no plugin no-such-plugin in the catalogue/);
  });

  it('logs: lines from 1 to 20000, file_name one of error, access, kinsta-cache-perf (400 otherwise); a log keeps its last lines only', async () => {
    const { sim } = await start({ seed: 23, sites: 2, pageCacheTtlMs: 0 });
    const env = [...sim.fleet.environments.values()][0]!;
    for (const file of ['error', 'access', 'kinsta-cache-perf']) {
      expect(await logs(sim, env.id, `?file_name=${file}&lines=20000`)).toEqual({ status: 200, body: { environment: { container_info: { logs: '' } } } });
    }
    for (const bad of [
      '?file_name=error&lines=20001',
      '?file_name=error&lines=0',
      '?file_name=error&lines=ten',
      '?file_name=error',
      '?file_name=debug&lines=5',
      '?lines=5',
    ]) {
      expect((await logs(sim, env.id, bad)).status, bad).toBe(400);
    }
    expect((await logs(sim, 'nope', '?file_name=error&lines=5')).status).toBe(404);
    for (let i = 0; i < KEPT_LOG_LINES + 5; i++) sim.logs.access(env, `/page-${i}`, 200, 10);
    const kept = ((await logs(sim, env.id, '?file_name=access&lines=20000')).body.environment.container_info.logs as string).split('\n');
    expect(kept).toHaveLength(KEPT_LOG_LINES);
    expect(kept.at(-1)).toContain(`/page-${KEPT_LOG_LINES + 4} `);
    expect(kept[0]).toContain('/page-5 ');
    const two = (await logs(sim, env.id, '?file_name=access&lines=2')).body.environment.container_info.logs as string;
    expect(two.split('\n')).toEqual(kept.slice(-2));
  });

  it('the real profile limits log reads to 35 per period of its general window, apart from other calls (spec profile: no such rule)', async () => {
    const { sim } = await start({ seed: 23, sites: 2, profile: 'real', rate: '1000/min' });
    const env = [...sim.fleet.environments.values()][0]!;
    const statuses: number[] = [];
    for (let i = 0; i < 36; i++) statuses.push((await logs(sim, env.id, '?file_name=error&lines=5')).status);
    expect(statuses.filter((s) => s === 200)).toHaveLength(35);
    expect(statuses.at(-1)).toBe(429);
    expect((await call(sim, 'GET', `/sites/environments/${env.id}/backups`)).status).toBe(200);
    const spec = (await start({ seed: 23, sites: 2, profile: 'spec', rate: '1000/min' })).sim;
    const specEnv = [...spec.fleet.environments.values()][0]!;
    for (let i = 0; i < 36; i++) expect((await logs(spec, specEnv.id, '?file_name=error&lines=5')).status).toBe(200);
  });

  it('`sim --break-plugin` with a plugin or version it does not have is exit 2', async () => {
    const result = await runCli(['sim', '--size', '2', '--break-plugin', 'akismet@0.0.0-nope']);
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/--break-plugin akismet@0\.0\.0-nope: akismet has versions/);
    const unknown = await runCli(['sim', '--size', '2', '--break-plugin', 'nosuch@latest']);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toMatch(/no plugin nosuch in the catalogue/);
  });

  it('`sim --logs-rate`, `--create-rate` or `--rate` that is not N/period is exit 2 with one line naming the flag, before anything starts', async () => {
    for (const flag of ['--logs-rate', '--create-rate', '--rate']) {
      const result = await runCli(['sim', '--size', '2', flag, 'lots']);
      expect(result.code, flag).toBe(2);
      expect(result.stderr).toMatch(new RegExp(`^sitefleet: ${flag} lots: rate "lots" is not of the form`));
      expect(result.stderr).not.toMatch(/ at /);
    }
  });
});
