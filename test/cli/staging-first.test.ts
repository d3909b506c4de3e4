import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { jsonSummary } from '../../src/notify/run-end.js';
import { slackMessage } from '../../src/notify/slack.js';
import { runCli, simEnv, tempDir, writePlaybook } from '../helpers/cli.js';
import { useRedis } from '../helpers/redis.js';
import { heldPages } from '../helpers/held-pages.js';
import { useSimulator, whenAnswered } from '../helpers/sim.js';
import { installed, shapeFleet } from '../helpers/themes.js';
import { codes, decisionsOf, HOUR, iso, night, playbook, playbookLeaving, POLL, sameSite, sitesOf, T0 } from '../helpers/staging.js';

const start = useSimulator();
const redis = useRedis();
afterEach(() => vi.restoreAllMocks());

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
    // Every staging write is sent before any look after one ends: the looks after wait until the last write
    // was answered. Else the first site seen broken taught the run's quarantine before the last write went,
    // which then kept it back (skipped), and that site's staging recorded no failure.
    const pages = await heldPages(sim, 'updateTheme');
    whenAnswered(sim, 'updateTheme', staged, pages.release);
    const first = await night(sim, env, T0, [], '{ staging_first: true }', ['--health-url', pages.url]);
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
    const first = await runCli(['run', playbookLeaving(sim, rollout), '--yes', '--report', reportPath, ...POLL], env, { now: () => T0 });
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
    const resumed = await runCli(['resume', reportPath, '--yes', ...POLL], env, { now: () => T0 + HOUR });
    expect(resumed.stdout).toContain('nothing left to send');
    expect(readFileSync(store, 'utf8')).toContain('"kind":"failed"');
    for (const at of [T0 + 24 * HOUR, T0 + 48 * HOUR]) {
      const before = installed(sim);
      await runCli(['run', playbookLeaving(sim, rollout), '--yes', '--report', join(tempDir(), 'r.json'), ...POLL], env, { now: () => at });
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
    const res = await runCli(['run', file, '--yes', '--report', join(dir, 'r.json'), ...POLL], simEnv(sim), { now: () => T0 });
    expect(res.code, res.stderr).toBe(0);
    const staging = envs.find((e) => e.displayName === 'staging')!;
    expect([staging.themes.get('calm')!.version, staging.themes.get('other')!.version]).toEqual(['1.0.1', '2.0.1']);
    const sent = sim.log.filter((e) => e.endpoint === 'updateTheme' && e.path.includes(staging.id)).map((e) => e.body);
    expect(sent).toEqual([
      { name: 'calm', update_version: '1.0.1' },
      { name: 'other', update_version: '2.0.1' },
    ]);
  });

  it('validate: staging first goes with themes.update, and its settings with staging_first', async () => {
    const base = 'version: 1\nname: v\ncompany: 0f1e2d3c-4b5a-4697-8877-665544332211\ntasks:\n';
    const wrong = writePlaybook(
      `${base}  - name: b\n    action: php.set_version\n    target: all\n    with: { php_version: "8.2" }\n    rollout: { staging_first: true }\n`,
    );
    const res = await runCli(['validate', wrong]);
    expect(res.code).toBe(2);
    expect(res.stderr).toMatch(
      /playbook\.yaml:\d+:\d+: tasks\.0\.rollout\.staging_first: staging first reruns an update on staging, then on live: themes\.update, plugins\.update, core\.update take it/,
    );
    const stray = writePlaybook(`${base}  - name: t\n    action: themes.update\n    target: all\n    rollout: { soak: 20h }\n`);
    const res2 = await runCli(['validate', stray]);
    expect(res2.code).toBe(2);
    expect(res2.stderr).toMatch(/tasks\.0\.rollout\.soak: goes with rollout\.staging_first: true/);
  });
});
