import { createHash } from 'node:crypto';
import { request } from 'undici';
import { describe, expect, it } from 'vitest';
import { CORE_VERSIONS, DOWNLOAD_FAILED, NOT_INSTALLED, coreEffect, coreReleases, drawnCoreVersion } from '../../src/sim/core.js';
import { generateFleet } from '../../src/sim/fleet.js';
import type { Simulator, SimulatorOptions } from '../../src/sim/server.js';
import { runCli, serveSimCli } from '../helpers/cli.js';
import { useSimulator } from '../helpers/sim.js';
import { call, settled } from './http.js';

const start = useSimulator();

/** A `real` simulator whose operations complete only when the test moves its clock (`tick`). */
async function realSim(options: SimulatorOptions = {}) {
  let now = Date.UTC(2026, 2, 1);
  const { sim } = await start({ profile: 'real', operationDelayMs: 1000, operationVisibleAfterMs: 0, createRate: '100/s', now: () => now, ...options });
  return { sim, tick: () => (now += 1000) };
}

/** Each environment's `wordpress_version`, as the site listing shows it. */
async function listed(sim: Simulator): Promise<Map<string, string | null>> {
  const { status, body } = await call(sim, 'GET', `/sites?company=${sim.companyId}&include_environments=true`);
  expect(status).toBe(200);
  const envs = (body.company.sites as { environments: { id: string; wordpress_version: string | null }[] }[]).flatMap((s) => s.environments);
  return new Map(envs.map((e) => [e.id, e.wordpress_version]));
}

/** Sends a WP-CLI command; returns its operation id (the command has not run yet). */
async function wp(sim: Simulator, envId: string, command: string): Promise<string> {
  const accepted = await call(sim, 'POST', `/sites/environments/${envId}/run-wp-cli-command`, { wp_command: command });
  expect(accepted.status).toBe(202);
  return accepted.body.operation_id as string;
}

const behind = (sim: Simulator) => [...sim.fleet.environments.values()].find((e) => e.wordpressVersion !== CORE_VERSIONS.at(-1))!;

describe('WordPress core on the simulated environments', () => {
  it('each environment runs a release of the catalogue: about 56% the newest, 25% the one before, the rest older', () => {
    const envs = [...generateFleet({ seed: 1, sites: 1500, themes: 8 }).environments.values()];
    const share = (pick: (v: string) => boolean) => envs.filter((e) => pick(e.wordpressVersion!)).length / envs.length;
    expect(share((v) => v === '6.7.2')).toBeCloseTo(18 / 32, 1);
    expect(share((v) => v === '6.7.1')).toBeCloseTo(8 / 32, 1);
    expect(share((v) => ['6.6.2', '6.5.5'].includes(v))).toBeCloseTo(4 / 32, 1);
    expect(share((v) => ['6.4.3', '6.3.1'].includes(v))).toBeCloseTo(2 / 32, 1);
    for (const e of envs) expect(CORE_VERSIONS).toContain(e.wordpressVersion);
    // A shorter catalogue gives what it lacks to its newest; the same id draws the same release.
    expect(share((v) => v === drawnCoreVersion('x', CORE_VERSIONS))).toBeGreaterThan(0);
    const two = envs.map((e) => drawnCoreVersion(e.id, ['6.6.2', '6.7.2']));
    expect(two.filter((v) => v === '6.7.2').length / two.length).toBeCloseTo(24 / 32, 1);
  });

  it('the catalogue: sorted whatever the order given, a latest newer than all of it, bad versions refused', () => {
    expect(coreReleases(['6.10.1', '6.9', '6.9'], '7.0.0')).toEqual({ releases: ['6.9', '6.10.1', '7.0.0'], installed: ['6.9', '6.10.1'] });
    expect(() => coreReleases(['6.7.2'], '6.7.1')).toThrow(/--core-latest 6\.7\.1: must be newer/);
    expect(() => coreReleases(['six'])).toThrow(/WordPress version "six"/);
    expect(() => coreReleases([])).toThrow(/at least one/);
    const core = coreReleases();
    const run = (current: string | null, command: string) => coreEffect(core, current, command.split(' '));
    expect(run('6.5.5', 'wp core update')).toEqual({ moveTo: '6.7.2' });
    expect(run('6.7.1', 'wp core upgrade --minor')).toEqual({ moveTo: '6.7.2' });
    expect(run('6.5.5', 'wp core update --minor')).toEqual({}); // the newest of its branch already
    expect(run('6.7.2', 'wp core update --version=6.5.5')).toEqual({}); // WP-CLI: up to date, no downgrade without --force
    expect(run('6.7.2', 'wp core update --version=6.5.5 --force')).toEqual({ moveTo: '6.5.5' });
    expect(run('6.5.5', 'wp core update --version=6.8.9 --locale=en_US')).toEqual({ failsWith: DOWNLOAD_FAILED });
    expect(run('6.5.5', 'wp core update --versoin=6.7.2')).toEqual({ failsWith: 'Error: Parameter errors: unknown --versoin parameter' });
    expect(run(null, 'wp core version')).toEqual({ failsWith: NOT_INSTALLED });
    expect(run('6.5.5', 'wp plugin update --all')).toBeUndefined();
  });

  it('the site listing shows each environment’s version; wp core version prints it', async () => {
    const { sim, tick } = await realSim({ sites: 10 });
    const shown = await listed(sim);
    expect(shown.size).toBe(sim.fleet.environments.size);
    for (const [id, version] of shown) expect(version).toBe(sim.fleet.environments.get(id)!.wordpressVersion);
    expect(new Set(shown.values()).size).toBeGreaterThan(1);
    const env = behind(sim);
    const id = await wp(sim, env.id, 'wp core version');
    tick();
    expect((await settled(sim, id)).body).toMatchObject({ status: 200, data: { result: env.wordpressVersion } });
  });

  it('wp core update --version=X moves the version when its operation completes, printing nothing back', async () => {
    const { sim, tick } = await realSim();
    const env = behind(sim);
    const before = env.wordpressVersion;
    const id = await wp(sim, env.id, 'wp core update --version=6.7.2');
    expect((await listed(sim)).get(env.id)).toBe(before); // accepted, not yet run
    tick();
    expect((await settled(sim, id)).body).toEqual({ status: 200, message: 'environment:run-wp-cli-command completed', data: null });
    expect((await listed(sim)).get(env.id)).toBe('6.7.2');
    expect(env.wpCommands).toEqual(['wp core update --version=6.7.2']);
  });

  it('wp core update without a version installs the newest release, --core-latest one that no environment ran', async () => {
    const { sim, tick } = await realSim({ coreLatest: '7.0.0' });
    expect([...(await listed(sim)).values()]).not.toContain('7.0.0');
    const env = behind(sim);
    const id = await wp(sim, env.id, 'wp  core   update');
    tick();
    await settled(sim, id);
    expect((await listed(sim)).get(env.id)).toBe('7.0.0');
  });

  it('a version wordpress.org does not have: the operation fails with WP-CLI’s error and the version stays', async () => {
    const { sim, tick } = await realSim();
    const env = behind(sim);
    const before = env.wordpressVersion;
    const id = await wp(sim, env.id, 'wp core update --version=6.7.9');
    tick();
    expect((await settled(sim, id)).body).toMatchObject({ status: 500, data: { status: 500, message: DOWNLOAD_FAILED } });
    expect((await listed(sim)).get(env.id)).toBe(before);
  });

  it('coreUpdateNoop: the command succeeds and prints nothing, the version does not move; switched off, it moves again', async () => {
    const { sim, tick } = await realSim({ coreUpdateNoop: true });
    const env = behind(sim);
    const before = env.wordpressVersion;
    const first = await wp(sim, env.id, 'wp core update --version=6.7.2');
    tick();
    expect((await settled(sim, first)).body).toMatchObject({ status: 200, data: null });
    expect((await listed(sim)).get(env.id)).toBe(before);
    sim.setCoreUpdateNoop(false);
    const second = await wp(sim, env.id, 'wp core update --version=6.7.2');
    tick();
    await settled(sim, second);
    expect((await listed(sim)).get(env.id)).toBe('6.7.2');
  });

  it('backups keep the version and restores put it back; a clone and a push of files copy it', async () => {
    const { sim, tick } = await realSim({ sites: 10 });
    const site = [...sim.fleet.sites.values()].find((s) => s.envIds.length === 2)!;
    const [live, staging] = site.envIds.map((id) => sim.fleet.environments.get(id)!);
    live!.wordpressVersion = '6.5.5';
    const backup = await call(sim, 'POST', `/sites/environments/${live!.id}/manual-backups`, { tag: 'before core' });
    tick();
    await settled(sim, backup.body.operation_id as string);
    const update = await wp(sim, live!.id, 'wp core update');
    tick();
    await settled(sim, update);
    expect(live!.wordpressVersion).toBe('6.7.2');
    const backupId = live!.backups.at(-1)!.id;
    const restore = await call(sim, 'POST', `/sites/environments/${live!.id}/backups/restore`, { backup_id: backupId });
    expect(restore.status, JSON.stringify(restore.body)).toBe(202);
    tick();
    await settled(sim, restore.body.operation_id as string);
    expect((await listed(sim)).get(live!.id)).toBe('6.5.5');

    staging!.wordpressVersion = '6.3.1';
    const push = await call(sim, 'PUT', `/sites/${site.id}/environments`, { source_env_id: live!.id, target_env_id: staging!.id, push_files: true });
    tick();
    await settled(sim, push.body.operation_id as string);
    expect(staging!.wordpressVersion).toBe('6.5.5');
    const clone = await call(sim, 'POST', `/sites/${site.id}/environments/clone`, { source_env_id: live!.id, display_name: 'copy' });
    tick();
    const cloned = (await settled(sim, clone.body.operation_id as string)).body.data.idEnv as string;
    expect((await listed(sim)).get(cloned)).toBe('6.5.5');
  });

  it('a plain environment has no WordPress: the listing shows null and wp core commands fail', async () => {
    const { sim, tick } = await realSim();
    const site = [...sim.fleet.sites.keys()][0]!;
    const plain = await call(sim, 'POST', `/sites/${site}/environments/plain`, { display_name: 'bare' });
    tick();
    const id = (await settled(sim, plain.body.operation_id as string)).body.data.idEnv as string;
    expect((await listed(sim)).get(id)).toBeNull();
    const op = await wp(sim, id, 'wp core version');
    tick();
    expect((await settled(sim, op)).body).toMatchObject({ status: 500, data: { message: NOT_INSTALLED } });
  });

  it('the theme and plugin sides of a seed are as before core was modelled (hash taken on cd17420)', () => {
    const fleet = generateFleet({ seed: 42, sites: 15, themes: 9, now: Date.UTC(2026, 0, 1) });
    const side = [[...fleet.pluginCatalog.values()], [...fleet.environments.values()].map((e) => [e.id, [...e.plugins]])];
    expect(createHash('sha256').update(JSON.stringify(side)).digest('hex')).toBe('6f3997b47fcb950f70d4960f207d2d933de00e91bec43a22d0a7b93277b2b48a');
  });
});

async function page(sim: Simulator, domain: string): Promise<number> {
  const res = await request(sim.siteUrl.replace('{{domain}}', domain));
  await res.body.dump();
  return res.statusCode;
}

describe('a WordPress release that breaks sites', () => {
  it('breakCore: sites on that release answer 500 and log a PHP fatal error in wp-includes; updating away heals them', async () => {
    const { sim, tick } = await realSim({ sites: 10, pageCacheTtlMs: 0, breakCore: ['6.7.1'] });
    expect(sim.breakCore('latest')).toBe('6.7.2');
    expect(() => sim.breakCore('6.7.9')).toThrow(/--break-core 6\.7\.9: not a WordPress release/);
    for (const e of sim.fleet.environments.values()) {
      const broken = e.wordpressVersion === '6.7.1' || e.wordpressVersion === '6.7.2';
      expect(await page(sim, e.domains[0]!.name)).toBe(broken ? 500 : 200);
      const error = (await call(sim, 'GET', `/sites/environments/${e.id}/logs?file_name=error&lines=6`)).body.environment.container_info.logs as string;
      expect(error.split('\n')[0] ?? '', e.id).toMatch(broken ? /PHP Fatal error: .* in \/www\/[a-z0-9]+_\d+\/public\/wp-includes\/option\.php:123$/ : /^$/);
    }
    const env = [...sim.fleet.environments.values()].find((e) => e.wordpressVersion === '6.7.1')!;
    const id = await wp(sim, env.id, 'wp core update --version=6.6.2 --force');
    tick();
    await settled(sim, id);
    expect(await page(sim, env.domains[0]!.name)).toBe(200);
  });
});

describe('sitefleet sim: the core flags', () => {
  it('--core-versions, --core-latest, --core-update-noop and --break-core reach the served answers', async () => {
    const args = ['--size', '3', '--op-delay', '0', '--core-versions', '6.6.2,6.5.5', '--core-latest', '7.0.0', '--core-update-noop'];
    const { info, stop } = await serveSimCli([...args, '--break-core', '6.6.2', '--page-cache-ttl', '0']);
    try {
      const get = async (path: string) => {
        const res = await request(`${info.base_url}/v2${path}`, { headers: { authorization: `Bearer ${info.token}` } });
        return (await res.body.json()) as any; // eslint-disable-line @typescript-eslint/no-explicit-any
      };
      const sites = (await get(`/sites?company=${info.company_id}&include_environments=true`)).company.sites as {
        environments: { id: string; wordpress_version: string; domains: { name: string }[] }[];
      }[];
      const envs = sites.flatMap((s) => s.environments);
      for (const e of envs) expect(['6.5.5', '6.6.2']).toContain(e.wordpress_version);
      const on662 = envs.find((e) => e.wordpress_version === '6.6.2')!;
      const res = await request(info.site_url.replace('{{domain}}', on662.domains[0]!.name));
      await res.body.dump();
      expect(res.statusCode).toBe(500);
      const sent = await request(`${info.base_url}/v2/sites/environments/${on662.id}/run-wp-cli-command`, {
        method: 'POST',
        headers: { authorization: `Bearer ${info.token}`, 'content-type': 'application/json' },
        body: JSON.stringify({ wp_command: 'wp core update' }),
      });
      const op = ((await sent.body.json()) as { operation_id: string }).operation_id;
      expect((await get(`/operations/${op}`)).status).toBe(200); // --op-delay 0: done at once
      const after = (await get(`/sites?company=${info.company_id}&include_environments=true`)).company.sites as typeof sites;
      expect(after.flatMap((s) => s.environments).find((e) => e.id === on662.id)!.wordpress_version).toBe('6.6.2'); // noop
    } finally {
      expect(await stop()).toBe(0);
    }
  });

  it('`sim --help` documents the core flags; a bad version is exit 2 naming the flag', async () => {
    const help = await runCli(['sim', '--help']);
    for (const flag of ['--core-versions', '--core-latest', '--core-update-noop', '--break-core']) expect(help.stdout).toContain(flag);
    const bad = await runCli(['sim', '--core-versions', '6.7.2', '--core-latest', '6.0']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('--core-latest 6.0');
    expect((await runCli(['sim', '--break-core', '5.0.0'])).code).toBe(2);
  });
});
