import { mkdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { parseRedisUrl, RedisLink } from '../../src/coord/redis/link.js';
import { companyKey } from '../../src/coord/redis/lock.js';
import { jsonSummary } from '../../src/notify/run-end.js';
import { HANDLERS } from '../../src/sim/handlers.js';
import type { Report } from '../../src/report/report.js';
import { runCli, simEnv, tempDir, writePlaybook } from '../helpers/cli.js';
import { useRedis } from '../helpers/redis.js';
import { useSimulator } from '../helpers/sim.js';
import { installed, shapeFleet } from '../helpers/themes.js';
import { decisionsOf, HOUR, night, playbook, POLL, sitesOf, T0 } from '../helpers/staging.js';

const start = useSimulator();
const redis = useRedis();
afterEach(() => vi.restoreAllMocks());

/** A first night of staging first on six sites (one theme, one update): its report and the state folder's staging store. */
async function stagedNight() {
  const { sim } = await start({ sites: 6, seed: 5 });
  shapeFleet(sim, { calm: { versions: ['1.0.0', '1.0.1'], vulnerable: [] } });
  const env = simEnv(sim);
  const reportPath = join(tempDir(), 'r.json');
  const run = await runCli(['run', playbook(sim), '--yes', '--report', reportPath, ...POLL], env, { now: () => T0 });
  expect(run.code, run.stderr).toBe(0);
  return { sim, env, reportPath, store: join(env.SITEFLEET_STATE_DIR!, 'staging', `${sim.companyId}.jsonl`) };
}

describe('rollout.staging_first across nights: the stores, releases between nights, the site that was meant, one count', () => {
  it('status records a staging end once: three status calls leave the store as the first left it', async () => {
    const { env, reportPath, store } = await stagedNight();
    const lines = () => readFileSync(store, 'utf8').split('\n').filter(Boolean);
    const staged = (JSON.parse(readFileSync(reportPath, 'utf8')) as Report).results.filter((r) => r.role === 'staging' && r.status === 'succeeded');
    expect(staged.length).toBeGreaterThan(0);
    // One line per staging environment's end.
    expect(lines()).toHaveLength(staged.length);
    const after = lines();
    for (let i = 1; i <= 3; i++) {
      const status = await runCli(['status', reportPath], env, { now: () => T0 + i * HOUR });
      expect(status.code, status.stderr).toBe(0);
      expect(lines()).toEqual(after);
    }
    // Each with the format's version.
    expect(after.every((l) => (JSON.parse(l) as { v: number }).v === 1)).toBe(true);
  });

  it('with --coordination too: status adds no field to the staging hash, and the run left one per end', async () => {
    const { sim } = await start({ sites: 6, seed: 5 });
    shapeFleet(sim, { calm: { versions: ['1.0.0', '1.0.1'], vulnerable: [] } });
    const env = simEnv(sim);
    const url = (await redis()).url;
    const reportPath = join(tempDir(), 'r.json');
    const run = await runCli(['--coordination', url, 'run', playbook(sim), '--yes', '--report', reportPath, ...POLL], env, { now: () => T0 });
    expect(run.code, run.stderr).toBe(0);
    const staged = (JSON.parse(readFileSync(reportPath, 'utf8')) as Report).results.filter((r) => r.role === 'staging' && r.status === 'succeeded');
    const link = await RedisLink.connect(parseRedisUrl(url));
    try {
      const fields = () => link.redis.hlen(companyKey(sim.companyId.toLowerCase(), 'staging', 'table'));
      expect(await fields()).toBe(staged.length);
      for (let i = 1; i <= 3; i++) {
        const status = await runCli(['--coordination', url, 'status', reportPath], env, { now: () => T0 + i * HOUR });
        expect(status.code, status.stderr).toBe(0);
        expect(await fields()).toBe(staged.length);
      }
    } finally {
      await link.close();
    }
  });

  it('a staging store that cannot be written is a warning, not the end of the command: resume with nothing left says so and finishes', async () => {
    const { env, reportPath, store } = await stagedNight();
    rmSync(store);
    mkdirSync(store);
    // No base URL: a resume with nothing to send needs none, nor a runtime to warn through.
    const { SITEFLEET_BASE_URL: _unused, ...offline } = env;
    const resumed = await runCli(['resume', reportPath, '--yes', ...POLL], offline, { now: () => T0 + HOUR });
    expect(resumed.code, resumed.stderr).toBe(0);
    expect(resumed.stdout).toContain('nothing left to send');
    expect(resumed.stderr).toMatch(/^sitefleet: warning: could not record what the staging updates came to \(.*\): live holds those versions/m);
  });

  it('a theme that releases faster than the soak still reaches live: live takes the version staging soaked, pinned, and staging then stages the newer one', async () => {
    const { sim } = await start({ sites: 4, seed: 5 });
    shapeFleet(sim, { calm: { versions: ['1.0.0', '1.0.1'], vulnerable: [] } });
    const env = simEnv(sim);
    const pairs = [...sim.fleet.sites.values()].flatMap((site) => {
      const envs = site.envIds.map((id) => sim.fleet.environments.get(id)!);
      const [live, staging] = [envs.find((e) => e.displayName === 'live'), envs.find((e) => e.displayName === 'staging')];
      return live && staging ? [{ live, staging }] : [];
    });
    expect(pairs.length).toBeGreaterThan(0);
    const versions = () => pairs.map(({ live, staging }) => `${live.themes.get('calm')!.version}/${staging.themes.get('calm')!.version}`);
    const release = (version: string) => sim.fleet.catalog.get('calm')!.versions.push(version);
    const rollout = '{ staging_first: true, soak: 20h }';
    expect((await night(sim, env, T0, [], rollout)).code).toBe(0);
    expect(new Set(versions())).toEqual(new Set(['1.0.0/1.0.1']));
    // A release before the soak ends: staging keeps what it soaks, live waits for that version.
    release('1.0.2');
    const second = await night(sim, env, T0 + 10 * HOUR, [], rollout);
    expect(second.code, second.stderr).toBe(0);
    expect(new Set(versions())).toEqual(new Set(['1.0.0/1.0.1']));
    expect(
      decisionsOf(second.report)
        .filter((d) => d.code === 'staging_soaking')
        .map((d) => d.version),
    ).toEqual(pairs.map(() => '1.0.1'));
    // Another release; the soak of 1.0.1 has passed: live takes 1.0.1, pinned, though 1.0.3 is offered, and staging stages 1.0.3.
    release('1.0.3');
    const updatesBefore = sim.log.length;
    const third = await night(sim, env, T0 + 24 * HOUR, [], rollout);
    expect(third.code, third.stderr).toBe(0);
    expect(new Set(versions())).toEqual(new Set(['1.0.1/1.0.3']));
    const sent = sim.log.slice(updatesBefore).filter((e) => e.endpoint === 'updateTheme' || e.endpoint === 'bulkUpdateThemes');
    expect(sent.every((e) => e.endpoint === 'updateTheme')).toBe(true);
    for (const { live } of pairs) expect(sent.find((e) => e.path.includes(live.id))?.body).toEqual({ name: 'calm', update_version: '1.0.1' });
    for (const r of third.report.results.filter((x) => x.role !== 'staging' && x.role !== 'backup' && x.step_id !== null))
      expect(r.runs).toEqual([{ name: 'calm', version: '1.0.1' }]);
    // The night after the next soak: live takes 1.0.3. No theme starves.
    const fourth = await night(sim, env, T0 + 48 * HOUR, [], rollout);
    expect(fourth.code, fourth.stderr).toBe(0);
    expect(new Set(versions())).toEqual(new Set(['1.0.3/1.0.3']));
  });

  it('two sites of one display name are paired by site id, from the site listing read once: each staging takes its own live update', async () => {
    const { sim } = await start({ sites: 4, seed: 5 });
    shapeFleet(sim, { calm: { versions: ['1.0.0', '1.0.1'], vulnerable: [] } });
    const [a, b] = [...sim.fleet.sites.values()].filter((s) => s.envIds.length === 2);
    sim.rename('site', b!.displayName, a!.displayName);
    const first = await night(sim, simEnv(sim), T0);
    expect(first.code, first.stderr).toBe(0);
    const stagingOf = (site: typeof a) => site!.envIds.map((id) => sim.fleet.environments.get(id)!).find((e) => e.displayName === 'staging')!;
    expect([stagingOf(a).themes.get('calm')!.version, stagingOf(b).themes.get('calm')!.version]).toEqual(['1.0.1', '1.0.1']);
    expect(sim.log.filter((e) => e.endpoint === 'listSites')).toHaveLength(1);
    // Each site's staging step carries its own site's decision: the staging environment of that very site.
    for (const site of [a, b]) {
      const staging = stagingOf(site);
      const step = first.report.results.find((r) => r.role === 'staging' && r.target.env_id === staging.id)!;
      expect(step.staging!.map((d) => d.staging!.env_id)).toEqual([staging.id]);
    }
  });

  it('without the site listing (404), staging first refuses a display name two sites share: exit 2, one line naming it, nothing sent', async () => {
    const { sim } = await start({ sites: 4, seed: 5, siteListing: false });
    shapeFleet(sim, { calm: { versions: ['1.0.0', '1.0.1'], vulnerable: [] } });
    const [a, b] = [...sim.fleet.sites.values()].filter((s) => s.envIds.length === 2);
    // Names that stand for one site each are paired as before.
    expect((await night(sim, simEnv(sim), T0)).code).toBe(0);
    const writes = sim.log.filter((e) => e.method !== 'GET').length;
    sim.rename('site', b!.displayName, a!.displayName);
    const file = playbook(sim);
    const refused = await runCli(['run', file, '--yes', '--report', join(tempDir(), 'r.json'), ...POLL], simEnv(sim), { now: () => T0 + 48 * HOUR });
    expect(refused.code).toBe(2);
    const lines = refused.stderr.trim().split('\n');
    // One line naming file, line and field, and the house's closing word.
    expect(lines, refused.stderr).toEqual([expect.any(String), '1 problem; nothing was sent']);
    expect(lines[0]).toMatch(/playbook\.yaml:\d+:\d+: tasks\.0\.rollout\.staging_first: staging first pairs live and staging by site id/);
    expect(lines[0]).toContain(JSON.stringify(a!.displayName));
    expect(sim.log.filter((e) => e.method !== 'GET')).toHaveLength(writes);
  });

  it('a site listing that leaves out an environment: it is known by its site name, as without the listing; never "no staging" for a site that has one', async () => {
    const { sim } = await start({ sites: 4, seed: 5 });
    shapeFleet(sim, { calm: { versions: ['1.0.0', '1.0.1'], vulnerable: [] } });
    const [a, b] = [...sim.fleet.sites.values()].filter((s) => s.envIds.length === 2);
    const stagingOf = (site: typeof a) => site!.envIds.find((id) => sim.fleet.environments.get(id)!.displayName === 'staging')!;
    // The listing leaves out a's staging environment (made since it was read, say).
    const listSites = HANDLERS.listSites;
    vi.spyOn(HANDLERS, 'listSites').mockImplementation((ctx) => {
      const answer = listSites(ctx) as { body: { company: { sites: { environments?: { id: string }[] }[] } } };
      for (const site of answer.body.company.sites) site.environments = site.environments?.filter((e) => e.id !== stagingOf(a));
      return answer as never;
    });
    const file = writePlaybook(
      `version: 1\nname: staged\nsettings: { rate_limit: 50/s }\ntasks:\n  - name: themes\n    action: themes.update\n    target: { environment: live }\n    rollout: { staging_first: true, no_staging: live }\n`,
    );
    const ran = await runCli(['run', file, '--yes', '--report', join(tempDir(), 'r.json'), ...POLL], simEnv(sim), { now: () => T0 });
    expect(ran.code, ran.stderr).toBe(0);
    // a's staging takes the update tonight; a's live waits for it, never "updated on live directly".
    const versions = installed(sim);
    expect(versions.get(`${stagingOf(a)} calm`)).toBe('1.0.1');
    expect(versions.get(`${a!.envIds.find((id) => id !== stagingOf(a))!} calm`)).toBe('1.0.0');
    expect(ran.stdout).not.toMatch(/no_staging/);

    // Once a's name stands for two sites, the environment left out cannot be told apart: refused, nothing sent.
    const writes = sim.log.filter((e) => e.method !== 'GET').length;
    sim.rename('site', b!.displayName, a!.displayName);
    const refused = await runCli(['run', file, '--yes', '--report', join(tempDir(), 'r.json'), ...POLL], simEnv(sim), { now: () => T0 + 48 * HOUR });
    expect(refused.code).toBe(2);
    const lines = refused.stderr.trim().split('\n');
    expect(lines, refused.stderr).toEqual([expect.any(String), '1 problem; nothing was sent']);
    expect(lines[0]).toContain(
      `site listing (GET /sites) leaves out some of their environments: the display name ${JSON.stringify(a!.displayName)} stands for more than one site`,
    );
    expect(sim.log.filter((e) => e.method !== 'GET')).toHaveLength(writes);
  });

  it('one count of a night: the plan, the staging lines, the summary and the webhook count each staged site once', async () => {
    const { sim } = await start({ sites: 6, seed: 5 });
    shapeFleet(sim, { calm: { versions: ['1.0.0', '1.0.1'], vulnerable: [] } });
    const { staged, alone } = sitesOf(sim);
    const env = simEnv(sim);
    const planned = await runCli(['plan', playbook(sim)], env, { now: () => T0 });
    const targets = staged + alone;
    expect(planned.stdout).toMatch(new RegExp(`^1 +themes +themes\\.update +${targets} `, 'm'));
    expect(planned.stdout).toContain(`staging first (themes): staged: calm 1.0.1 on ${staged} sites`);
    const first = await night(sim, env, T0);
    expect(first.code, first.stderr).toBe(0);
    // The task's row counts its targets (each live environment once), as the plan did; staging's runs are a row apart.
    expect(first.stdout).toMatch(new RegExp(`^themes +${targets} +0 +0 +0 +0 +${targets} +0$`, 'm'));
    expect(first.stdout).toMatch(new RegExp(`^themes: staging first +${staged} +${staged} +0 +0 +0 +0 +0$`, 'm'));
    const webhook = jsonSummary(
      { name: 'staged', exitCode: 0, startedAt: new Date(T0), finishedAt: new Date(T0), report: { value: first.report, path: 'r.json' } },
      new Date(T0),
    );
    expect(webhook.staging).toContainEqual(expect.objectContaining({ code: 'staged', theme: 'calm', sites: staged }));
  });
});
