import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { parseRedisUrl, RedisLink } from '../../src/coord/redis/link.js';
import { companyKey } from '../../src/coord/redis/lock.js';
import { jsonSummary } from '../../src/notify/run-end.js';
import { slackMessage } from '../../src/notify/slack.js';
import type { StagingDecision } from '../../src/plan/staging-first.js';
import { HANDLERS } from '../../src/sim/handlers.js';
import type { Report } from '../../src/report/report.js';
import type { Simulator } from '../../src/sim/server.js';
import { runCli, simEnv, tempDir, writePlaybook } from '../helpers/cli.js';
import { useRedis } from '../helpers/redis.js';
import { useSimulator } from '../helpers/sim.js';
import { installed, shapeFleet } from '../helpers/themes.js';

const start = useSimulator();
const redis = useRedis();
afterEach(() => vi.restoreAllMocks());

/** Nights of a fleet's life, given to the CLI as its clock: no test waits for the soak to pass. */
const T0 = Date.parse('2026-03-02T02:00:00.000Z');
const HOUR = 3_600_000;
const iso = (at: number) => new Date(at).toISOString();

function playbook(sim: Simulator, rollout = '{ staging_first: true, soak: 20h }', withBlock = '{}'): string {
  return writePlaybook(
    `version: 1
name: staged
settings: { rate_limit: 50/s }
tasks:
  - name: themes
    action: themes.update
    target: { environment: live }
    allow_empty: true
    backup_first: true
    with: ${withBlock}
    health: { url: "${sim.siteUrl}", attempts: 2, interval: 50ms, on_broken: restore }
    rollout: ${rollout}
`,
  );
}

/** The same task with on_broken: leave (a broken staging keeps the version), and no restore points. */
function playbookLeaving(sim: Simulator, rollout: string): string {
  return writePlaybook(
    `version: 1\nname: staged\nsettings: { rate_limit: 50/s }\ntasks:\n  - name: themes\n    action: themes.update\n    target: { environment: live }\n    health: { url: "${sim.siteUrl}", attempts: 2, interval: 50ms }\n    rollout: ${rollout}\n`,
  );
}

/** Whether two environments are of one site. */
function sameSite(sim: Simulator, a: string, b: string): boolean {
  return sim.fleet.environments.get(a)!.siteId === sim.fleet.environments.get(b)!.siteId;
}

/** One night's run at `at`: what it changed on the simulator, by environment name, and its report. */
async function night(
  sim: Simulator,
  env: Record<string, string>,
  at: number,
  flags: string[] = [],
  rollout?: string,
  runFlags: string[] = [],
  withBlock?: string,
) {
  const reportPath = join(tempDir(), 'r.json');
  const before = installed(sim);
  const result = await runCli([...flags, 'run', playbook(sim, rollout, withBlock), '--yes', '--report', reportPath, ...runFlags], env, { now: () => at });
  const after = installed(sim);
  const names = new Map([...sim.fleet.environments.values()].map((e) => [e.id, e.displayName]));
  const moved = [...before].filter(([key, v]) => after.get(key) !== v).map(([key]) => names.get(key.split(' ')[0]!)!);
  return { ...result, moved, report: JSON.parse(readFileSync(reportPath, 'utf8')) as Report };
}

const decisionsOf = (report: Report): StagingDecision[] => report.results.flatMap((r) => r.staging ?? []);
const codes = (report: Report) => [...new Set(decisionsOf(report).map((d) => d.code))].sort();

/** Sites with a staging environment, and those without (the first site's staging renamed away, so there is one). */
function sitesOf(sim: Simulator): { staged: number; alone: number } {
  const first = [...sim.fleet.sites.values()].find((s) => s.envIds.some((id) => sim.fleet.environments.get(id)!.displayName === 'staging'))!;
  sim.rename('environment', `${first.displayName}/staging`, 'preview');
  const sites = [...sim.fleet.sites.values()].map((s) => s.envIds.map((id) => sim.fleet.environments.get(id)!.displayName));
  return { staged: sites.filter((n) => n.includes('staging')).length, alone: sites.filter((n) => !n.includes('staging')).length };
}

describe('rollout.staging_first: staging takes the update first, live on a later run', () => {
  it('a theme that keeps staging healthy reaches live on the run after the soak; nothing is pushed between environments', async () => {
    const { sim } = await start({ sites: 6, seed: 5 });
    shapeFleet(sim, { calm: { versions: ['1.0.0', '1.0.1'], vulnerable: [] } });
    const { staged, alone } = sitesOf(sim);
    expect(staged).toBeGreaterThan(0);
    expect(alone).toBeGreaterThan(0);
    const env = simEnv(sim);
    const first = await night(sim, env, T0);
    expect(first.code, first.stderr).toBe(0);
    // Tonight staging alone: every staging environment of a site whose live is offered the update.
    expect(first.moved.sort()).toEqual(Array(staged).fill('staging'));
    expect(first.report.results.filter((r) => r.role === 'staging' && r.status === 'succeeded')).toHaveLength(staged);
    expect(codes(first.report)).toEqual(['no_staging', 'staged']);
    expect(first.stdout).toContain('staged: calm 1.0.1 goes to staging first; live follows on a run after the soak');
    expect(first.stdout).toContain('no_staging: calm 1.0.1: the site has no environment named staging (rollout.no_staging: live updates such sites directly)');
    // Ten hours on: staging has run it since last night, live waits for the rest of the soak.
    const page = join(tempDir(), 'run.html');
    const second = await night(sim, env, T0 + 10 * HOUR, [], undefined, ['--html', page]);
    expect(second.moved).toEqual([]);
    // The run's page says so site by site; plan says it folded, with the soak's end.
    const html = readFileSync(page, 'utf8');
    expect(html).toContain(`<h2>Staging first (${staged + alone})</h2>`);
    expect(html.match(/data-code="staging_soaking"/g)).toHaveLength(staged);
    const webhook = jsonSummary(
      { name: 'staged', exitCode: 0, startedAt: new Date(T0), finishedAt: new Date(T0), report: { value: second.report, path: 'r.json' } },
      new Date(T0),
    );
    expect(webhook.staging).toContainEqual({
      task: 'themes',
      code: 'staging_soaking',
      theme: 'calm',
      version: '1.0.1',
      until: iso(T0 + 20 * HOUR),
      override: 'a shorter rollout.soak',
      sites: staged,
    });
    const slack = JSON.stringify(
      slackMessage(
        { name: 'staged', exitCode: 0, startedAt: new Date(T0), finishedAt: new Date(T0), report: { value: second.report, path: 'r.json' } },
        new Date(T0),
      ),
    );
    expect(slack).toContain(`• held: \`staging_soaking\` calm 1.0.1 on ${staged} sites, live after ${iso(T0 + 20 * HOUR)}`);
    const planned = await runCli(['plan', playbook(sim)], env, { now: () => T0 + 10 * HOUR });
    expect(planned.stdout).toContain(
      `staging first (themes): staging_soaking: calm 1.0.1 on ${staged} sites, live after ${iso(T0 + 20 * HOUR)} (a shorter rollout.soak)`,
    );
    const soaking = decisionsOf(second.report).filter((d) => d.code === 'staging_soaking');
    expect(soaking).toHaveLength(staged);
    expect(soaking[0]).toMatchObject({ version: '1.0.1', since: iso(T0), until: iso(T0 + 20 * HOUR) });
    // The next night: live takes the same update, rerun on live; the sites without staging are still held.
    const third = await night(sim, env, T0 + 24 * HOUR);
    expect(third.moved.sort()).toEqual(Array(staged).fill('live'));
    expect(decisionsOf(third.report).filter((d) => d.code === 'promoted')).toHaveLength(staged);
    expect(codes(third.report)).toEqual(['no_staging', 'promoted']);
    expect(sim.log.filter((e) => e.endpoint === 'pushEnvironment' || e.endpoint === 'cloneEnvironment')).toEqual([]);
  });

  it('a theme that breaks staging never reaches live, and staging is not broken again night after night', async () => {
    const { sim } = await start({ sites: 6, seed: 5 });
    shapeFleet(sim, { risky: { versions: ['2.0.0', '2.1.0'], vulnerable: [] } });
    sim.breakTheme('risky@2.1.0');
    const { staged } = sitesOf(sim);
    const env = simEnv(sim);
    const first = await night(sim, env, T0, [], '{ staging_first: true }');
    // Staging broke and was put back from its restore point: the run fails (exit 1), live untouched.
    expect(first.code).toBe(1);
    expect(first.moved).toEqual([]);
    expect(first.report.results.filter((r) => r.role === 'staging' && r.status === 'failed' && r.restored?.status === 'succeeded')).toHaveLength(staged);
    const writesBefore = sim.log.filter((e) => e.endpoint === 'updateTheme').length;
    const second = await night(sim, env, T0 + 24 * HOUR, [], '{ staging_first: true }');
    expect(second.code, second.stderr).toBe(0);
    expect(second.moved).toEqual([]);
    expect(sim.log.filter((e) => e.endpoint === 'updateTheme').length).toBe(writesBefore);
    const failed = decisionsOf(second.report).filter((d) => d.code === 'staging_failed');
    expect(failed).toHaveLength(staged);
    expect(failed[0]).toMatchObject({ failed_at: iso(T0), why: expect.stringMatching(/^its staging update ended failed: /) as unknown });
    expect(second.stdout).toContain(`staging_failed: risky 2.1.0 failed on staging at ${iso(T0)}; live keeps its version`);
  });

  it('no_staging: live updates the sites without staging at once; --coordination keeps the record in Redis for every machine', async () => {
    const { sim } = await start({ sites: 6, seed: 5 });
    shapeFleet(sim, { calm: { versions: ['1.0.0', '1.0.1'], vulnerable: [] } });
    const { staged, alone } = sitesOf(sim);
    const url = (await redis()).url;
    const rollout = '{ staging_first: true, no_staging: live }';
    const first = await night(sim, simEnv(sim), T0, ['--coordination', url], rollout);
    expect(first.code, first.stderr).toBe(0);
    expect(first.moved.filter((n) => n === 'live')).toHaveLength(alone);
    expect(first.moved.filter((n) => n === 'staging')).toHaveLength(staged);
    // Another machine, with a state folder of its own, promotes from what Redis holds.
    const second = await night(sim, simEnv(sim), T0 + HOUR, ['--coordination', url], rollout);
    expect(second.moved.sort()).toEqual(Array(staged).fill('live'));
  });

  it('a version staging cannot take, or that no staging update checked, never reaches live (also with no_staging: live)', async () => {
    const { sim } = await start({ sites: 6, seed: 5 });
    shapeFleet(sim, { calm: { versions: ['1.0.0', '1.0.1'], vulnerable: [] } });
    const stagings = [...sim.fleet.environments.values()].filter((e) => e.displayName === 'staging');
    // One staging runs a build newer than the listing's latest (not offered 1.0.1); another took 1.0.1 by hand.
    stagings[0]!.themes.get('calm')!.version = '1.1.0';
    stagings[1]!.themes.get('calm')!.version = '1.0.1';
    const rollout = '{ staging_first: true, no_staging: live }';
    const first = await night(sim, simEnv(sim), T0, [], rollout);
    expect(first.code, first.stderr).toBe(0);
    const codesOf = (envId: string) =>
      first.report.results
        .filter((r) => r.step_id === null && (r.staging ?? []).length > 0 && sameSite(sim, r.target.env_id!, envId))
        .flatMap((r) => r.staging!.map((d) => d.code));
    expect(codesOf(stagings[0]!.id)).toEqual(['staging_mismatch']);
    expect(codesOf(stagings[1]!.id)).toEqual(['staging_unchecked']);
    const liveOf = (staging: { id: string }) => [...sim.fleet.environments.values()].find((e) => e.displayName === 'live' && sameSite(sim, e.id, staging.id))!;
    expect(liveOf(stagings[0]!).themes.get('calm')!.version).toBe('1.0.0');
    expect(liveOf(stagings[1]!).themes.get('calm')!.version).toBe('1.0.0');
  });

  it('a staging failure whose record was lost with a killed run: resume records it, and live never takes the version', async () => {
    const { sim } = await start({ sites: 6, seed: 5 });
    shapeFleet(sim, { risky: { versions: ['2.0.0', '2.1.0'], vulnerable: [] } });
    sim.breakTheme('risky@2.1.0');
    const env = simEnv(sim);
    // on_broken: leave: staging keeps the broken version.
    const rollout = '{ staging_first: true, soak: 20h }';
    const reportPath = join(tempDir(), 'r.json');
    const first = await runCli(['run', playbookLeaving(sim, rollout), '--yes', '--report', reportPath], env, { now: () => T0 });
    expect(first.code).toBe(1);
    // What a SIGKILL after the last result leaves: no end in the journal, nothing in the store.
    const journal = reportPath.replace(/\.json$/, '.journal.jsonl');
    writeFileSync(
      journal,
      readFileSync(journal, 'utf8')
        .split('\n')
        .filter((l) => l && !l.includes('"t":"end"'))
        .map((l) => `${l}\n`)
        .join(''),
    );
    const store = join(env.SITEFLEET_STATE_DIR!, 'staging', `${sim.companyId}.jsonl`);
    writeFileSync(store, '');
    const resumed = await runCli(['resume', reportPath, '--yes'], env, { now: () => T0 + HOUR });
    expect(resumed.stdout).toContain('nothing left to send');
    expect(readFileSync(store, 'utf8')).toContain('"kind":"failed"');
    for (const at of [T0 + 24 * HOUR, T0 + 48 * HOUR]) {
      const before = installed(sim);
      await runCli(['run', playbookLeaving(sim, rollout), '--yes', '--report', join(tempDir(), 'r.json')], env, { now: () => at });
      expect(installed(sim)).toEqual(before);
    }
  });

  it('a version the policy leaves alone on staging is not "staged": live waits, saying why', async () => {
    const { sim } = await start({ sites: 6, seed: 5 });
    shapeFleet(sim, { calm: { versions: ['0.9.0', '1.1.0', '1.2.0'], vulnerable: [] } });
    // max_bump: minor takes live 1.1.0 → 1.2.0, but not staging's 0.9.0 → 1.2.0 (a major jump).
    for (const e of sim.fleet.environments.values()) e.themes.get('calm')!.version = e.displayName === 'staging' ? '0.9.0' : '1.1.0';
    const held = await night(sim, simEnv(sim), T0, [], '{ staging_first: true }', [], '{ max_bump: minor }');
    expect(held.moved).toEqual([]);
    expect(codes(held.report)).toEqual(['staging_mismatch']);
    expect(held.stdout).toContain('staging_mismatch: calm 1.2.0 cannot be staged on staging');
    expect(held.stdout).not.toContain('staged:');
  });

  it('one staging for two live-like environments takes every theme either of them stages, each once, pinned', async () => {
    const { sim } = await start({ sites: 2, seed: 5 });
    shapeFleet(sim, { calm: { versions: ['1.0.0', '1.0.1'], vulnerable: [] }, other: { versions: ['2.0.0', '2.0.1'], vulnerable: [] } });
    const site = [...sim.fleet.sites.values()].find((s) => s.envIds.some((id) => sim.fleet.environments.get(id)!.displayName === 'staging'))!;
    const envs = site.envIds.map((id) => sim.fleet.environments.get(id)!);
    const live = envs.find((e) => e.displayName === 'live')!;
    // A second live-like environment of the site: live runs calm only, preview other only, staging both.
    const preview = { ...live, id: '11111111-2222-4333-8444-555555555555', displayName: 'preview', themes: new Map(live.themes), domains: [], backups: [] };
    sim.fleet.environments.set(preview.id, preview);
    site.envIds.push(preview.id);
    live.themes.delete('other');
    preview.themes.delete('calm');
    const dir = tempDir();
    const file = writePlaybook(
      `version: 1\nname: staged\nsettings: { rate_limit: 50/s }\ntasks:\n  - name: themes\n    action: themes.update\n    target: { environment: [live, preview] }\n    rollout: { staging_first: true }\n`,
      dir,
    );
    const res = await runCli(['run', file, '--yes', '--report', join(dir, 'r.json')], simEnv(sim), { now: () => T0 });
    expect(res.code, res.stderr).toBe(0);
    const staging = envs.find((e) => e.displayName === 'staging')!;
    expect([staging.themes.get('calm')!.version, staging.themes.get('other')!.version]).toEqual(['1.0.1', '2.0.1']);
    const sent = sim.log.filter((e) => e.endpoint === 'updateTheme' && e.path.includes(staging.id)).map((e) => e.body);
    expect(sent).toEqual([
      { name: 'calm', update_version: '1.0.1' },
      { name: 'other', update_version: '2.0.1' },
    ]);
  });

  it('status records a staging end once: three status calls leave the store as the first left it', async () => {
    const { sim } = await start({ sites: 6, seed: 5 });
    shapeFleet(sim, { calm: { versions: ['1.0.0', '1.0.1'], vulnerable: [] } });
    const env = simEnv(sim);
    const reportPath = join(tempDir(), 'r.json');
    const run = await runCli(['run', playbook(sim), '--yes', '--report', reportPath], env, { now: () => T0 });
    expect(run.code, run.stderr).toBe(0);
    const store = join(env.SITEFLEET_STATE_DIR!, 'staging', `${sim.companyId}.jsonl`);
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
    const run = await runCli(['--coordination', url, 'run', playbook(sim), '--yes', '--report', reportPath], env, { now: () => T0 });
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
    const { sim } = await start({ sites: 6, seed: 5 });
    shapeFleet(sim, { calm: { versions: ['1.0.0', '1.0.1'], vulnerable: [] } });
    const env = simEnv(sim);
    const reportPath = join(tempDir(), 'r.json');
    const run = await runCli(['run', playbook(sim), '--yes', '--report', reportPath], env, { now: () => T0 });
    expect(run.code, run.stderr).toBe(0);
    const store = join(env.SITEFLEET_STATE_DIR!, 'staging', `${sim.companyId}.jsonl`);
    rmSync(store);
    mkdirSync(store);
    // No base URL: a resume with nothing to send needs none, nor a runtime to warn through.
    const { SITEFLEET_BASE_URL: _unused, ...offline } = env;
    const resumed = await runCli(['resume', reportPath, '--yes'], offline, { now: () => T0 + HOUR });
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
    const refused = await runCli(['run', file, '--yes', '--report', join(tempDir(), 'r.json')], simEnv(sim), { now: () => T0 + 48 * HOUR });
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
    const ran = await runCli(['run', file, '--yes', '--report', join(tempDir(), 'r.json')], simEnv(sim), { now: () => T0 });
    expect(ran.code, ran.stderr).toBe(0);
    // a's staging takes the update tonight; a's live waits for it, never "updated on live directly".
    const versions = installed(sim);
    expect(versions.get(`${stagingOf(a)} calm`)).toBe('1.0.1');
    expect(versions.get(`${a!.envIds.find((id) => id !== stagingOf(a))!} calm`)).toBe('1.0.0');
    expect(ran.stdout).not.toMatch(/no_staging/);

    // Once a's name stands for two sites, the environment left out cannot be told apart: refused, nothing sent.
    const writes = sim.log.filter((e) => e.method !== 'GET').length;
    sim.rename('site', b!.displayName, a!.displayName);
    const refused = await runCli(['run', file, '--yes', '--report', join(tempDir(), 'r.json')], simEnv(sim), { now: () => T0 + 48 * HOUR });
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

  it('validate: staging first goes with themes.update, and its settings with staging_first', async () => {
    const base = 'version: 1\nname: v\ncompany: 0f1e2d3c-4b5a-4697-8877-665544332211\ntasks:\n';
    const wrong = writePlaybook(
      `${base}  - name: b\n    action: php.set_version\n    target: all\n    with: { php_version: "8.2" }\n    rollout: { staging_first: true }\n`,
    );
    const res = await runCli(['validate', wrong]);
    expect(res.code).toBe(2);
    expect(res.stderr).toMatch(
      /playbook\.yaml:\d+:\d+: tasks\.0\.rollout\.staging_first: staging first reruns an update on staging, then on live: themes\.update take it/,
    );
    const stray = writePlaybook(`${base}  - name: t\n    action: themes.update\n    target: all\n    rollout: { soak: 20h }\n`);
    const res2 = await runCli(['validate', stray]);
    expect(res2.code).toBe(2);
    expect(res2.stderr).toMatch(/tasks\.0\.rollout\.soak: goes with rollout\.staging_first: true/);
  });
});
