import { nameOf } from '../../src/inventory/kinds.js';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { ReleaseAgeDecision } from '../../src/inventory/release-age.js';
import { jsonSummary } from '../../src/notify/run-end.js';
import { slackMessage } from '../../src/notify/slack.js';
import type { Report } from '../../src/report/report.js';
import type { Simulator } from '../../src/sim/server.js';
import { runCli, simEnv, tempDir, writePlaybook } from '../helpers/cli.js';
import { useRedis } from '../helpers/redis.js';
import { useSimulator } from '../helpers/sim.js';
import { installed, shapeFleet, withoutPlugins, type Catalog } from '../helpers/themes.js';

const start = useSimulator();
const redis = useRedis();

/** Nights of a fleet's life, given to the CLI as its clock: no test waits for days to pass. */
const T0 = Date.parse('2026-03-02T02:00:00.000Z');
const DAY = 86_400_000;
const iso = (at: number) => new Date(at).toISOString();

/** Every environment gets all three: a plain patch, a patch that fixes a vulnerable version, and a major. */
const CATALOG: Catalog = {
  'patch-plain': { versions: ['4.1.0', '4.1.1'], vulnerable: [] },
  'patch-sec': { versions: ['2.0', '2.0.1'], vulnerable: ['2.0'] },
  'major-plain': { versions: ['1.9.3', '2.0.0'], vulnerable: [] },
};
const AGED = '{ min_release_age: 3d, by_bump: { major: 14d } }';

function playbook(withBlock: string, dir = tempDir()): string {
  return writePlaybook(
    `version: 1\nname: aged\nsettings: { rate_limit: 50/s, wait: true }\ntasks:\n  - name: themes\n    action: themes.update\n    target: all\n    verify: true\n    with: ${withBlock}\n`,
    dir,
  );
}

/** One night's run at `at`, with the state (first-seen store) of `env`; what it sent is read from the simulator. */
async function night(sim: Simulator, env: Record<string, string>, at: number, withBlock = AGED, flags: string[] = [], runFlags: string[] = []) {
  const dir = tempDir();
  const reportPath = join(dir, 'r.json');
  const before = installed(sim);
  const result = await runCli([...flags, 'run', playbook(withBlock, dir), '--yes', '--poll-interval', '20', '--report', reportPath, ...runFlags], env, {
    now: () => at,
  });
  expect(result.code, result.stderr).toBe(0);
  const after = installed(sim);
  const moved = [...new Set([...before].filter(([key, v]) => after.get(key) !== v).map(([key]) => key.split(' ')[1]!))].sort();
  return { ...result, moved, report: JSON.parse(readFileSync(reportPath, 'utf8')) as Report };
}

/** Every release-age decision of a report, by theme: the same for each environment, as they share versions. */
function decisions(report: Report): Map<string, ReleaseAgeDecision> {
  const all = report.results.flatMap((r) => r.release_age ?? []);
  const byTheme = new Map(all.map((d) => [nameOf(d), d]));
  for (const d of all) expect(d).toEqual(byTheme.get(nameOf(d)));
  return byTheme;
}

describe('with.min_release_age: new versions age before they are sent', () => {
  it('a fresh state folder holds every non-security update on the first night, sends the security fix, and the rest once each has aged', async () => {
    const { sim } = await start({ sites: 4, seed: 3 });
    shapeFleet(sim, CATALOG);
    withoutPlugins(sim);
    const env = simEnv(sim);
    const page = join(tempDir(), 'run.html');
    const first = await night(sim, env, T0, AGED, [], ['--html', page]);
    expect(first.moved).toEqual(['patch-sec']);
    const held = decisions(first.report);
    expect(held.get('patch-plain')).toMatchObject({ code: 'age_pending', held: true, first_seen: iso(T0), eligible_at: iso(T0 + 3 * DAY) });
    expect(held.get('major-plain')).toMatchObject({
      code: 'age_pending',
      eligible_at: iso(T0 + 14 * DAY),
      override: 'lower with.by_bump.major to take it sooner',
    });
    expect(held.get('patch-sec')).toMatchObject({ code: 'security_bypass', held: false, installed: '2.0', version: '2.0.1' });
    // The summary says why, per theme, with the date it becomes eligible.
    const envs = sim.fleet.environments.size;
    expect(first.stdout).toContain(
      `why (themes), ${envs} environments: left alone: patch-plain: age_pending: 4.1.0 → 4.1.1 first seen ${iso(T0)}, eligible ${iso(T0 + 3 * DAY)} (lower with.min_release_age to take it sooner)\n`,
    );
    expect(first.stdout).toMatch(/why \(themes\), \d+ environments: sent before its age: patch-sec: security_bypass: 2\.0 → 2\.0\.1 fixes vulnerable 2\.0/);
    // The run's page and a webhook's JSON list them too, each theme version once.
    const html = readFileSync(page, 'utf8');
    expect(html).toContain('<h2>Release age (3)</h2>');
    expect(html).toMatch(
      new RegExp(`data-code="age_pending">[^]*?patch-plain 4\\.1\\.0 → 4\\.1\\.1</td>\\s*<td class="n">${envs}</td>[^]*?${iso(T0 + 3 * DAY)}`),
    );
    const webhook = jsonSummary(
      { name: 'aged', exitCode: 0, startedAt: new Date(T0), finishedAt: new Date(T0), report: { value: first.report, path: 'r.json' } },
      new Date(T0),
    );
    expect(webhook.release_age).toContainEqual({ task: 'themes', ...held.get('patch-plain'), environments: envs });
    const slack = JSON.stringify(
      slackMessage(
        { name: 'aged', exitCode: 0, startedAt: new Date(T0), finishedAt: new Date(T0), report: { value: first.report, path: 'r.json' } },
        new Date(T0),
      ),
    );
    expect(slack).toContain(`• held: \`age_pending\` patch-plain 4.1.0 → 4.1.1 on`);
    expect(slack).toContain(`environments, eligible ${iso(T0 + 3 * DAY)}`);
    const file = join(env.SITEFLEET_STATE_DIR!, 'first-seen', `${sim.companyId}.jsonl`);
    expect(readFileSync(file, 'utf8')).toContain(JSON.stringify({ v: 1, theme: 'patch-plain', version: '4.1.1', first_seen: iso(T0) }));

    // Two days on the clock has not restarted: still held, eligible the same day.
    const second = await night(sim, env, T0 + 2 * DAY);
    expect(second.moved).toEqual([]);
    expect(decisions(second.report).get('patch-plain')).toMatchObject({ code: 'age_pending', first_seen: iso(T0), eligible_at: iso(T0 + 3 * DAY) });
    expect((await night(sim, env, T0 + 3 * DAY)).moved).toEqual(['patch-plain']);
    expect((await night(sim, env, T0 + 14 * DAY - 1)).moved).toEqual([]);
    expect((await night(sim, env, T0 + 14 * DAY)).moved).toEqual(['major-plain']);
  });

  it('release_age_bypass: none holds the security fix too, until its age', async () => {
    const { sim } = await start({ sites: 3, seed: 3 });
    shapeFleet(sim, CATALOG);
    withoutPlugins(sim);
    const env = simEnv(sim);
    const strict = '{ min_release_age: 3d, release_age_bypass: none }';
    const first = await night(sim, env, T0, strict);
    expect(first.moved).toEqual([]);
    expect(decisions(first.report).get('patch-sec')).toMatchObject({ code: 'age_pending', held: true });
    expect((await night(sim, env, T0 + 3 * DAY, strict)).moved).toEqual(['major-plain', 'patch-plain', 'patch-sec']);
  });

  it('a newer version seen meanwhile restarts its own clock: the aged one is reported superseded, the newer one goes when it has aged', async () => {
    const { sim } = await start({ sites: 3, seed: 3 });
    shapeFleet(sim, { fast: { versions: ['1.0.0', '1.0.1'], vulnerable: [] } });
    withoutPlugins(sim);
    const env = simEnv(sim);
    const aged = '{ min_release_age: 3d }';
    expect((await night(sim, env, T0, aged)).moved).toEqual([]);
    sim.fleet.catalog.get('fast')!.versions.push('1.0.2');
    const newer = await night(sim, env, T0 + 2 * DAY, aged);
    expect(newer.moved).toEqual([]);
    expect(decisions(newer.report).get('fast')).toMatchObject({
      code: 'age_pending',
      version: '1.0.2',
      first_seen: iso(T0 + 2 * DAY),
      eligible_at: iso(T0 + 5 * DAY),
    });
    const superseded = await night(sim, env, T0 + 4 * DAY, aged);
    expect(superseded.moved).toEqual([]);
    expect(decisions(superseded.report).get('fast')).toMatchObject({
      code: 'superseded',
      version: '1.0.2',
      superseded: { version: '1.0.1', eligible_at: iso(T0 + 3 * DAY) },
      eligible_at: iso(T0 + 5 * DAY),
    });
    expect(superseded.stdout).toContain(`left alone: fast: superseded: 1.0.1 was eligible ${iso(T0 + 3 * DAY)} but 1.0.2 replaced it`);
    expect((await night(sim, env, T0 + 5 * DAY, aged)).moved).toEqual(['fast']);
    expect([...installed(sim).values()]).toEqual([...installed(sim).keys()].map(() => '1.0.2'));
  });

  it('max_hold sends the newest version of a theme that releases faster than its age, counted from the oldest version the install has not taken', async () => {
    const { sim } = await start({ sites: 3, seed: 3 });
    shapeFleet(sim, { fast: { versions: ['1.0.0', '1.0.1'], vulnerable: [] } });
    withoutPlugins(sim);
    const env = simEnv(sim);
    const fast = '{ min_release_age: 3d, max_hold: 5d }';
    const versions = sim.fleet.catalog.get('fast')!.versions;
    expect((await night(sim, env, T0, fast)).moved).toEqual([]);
    versions.push('1.0.2');
    expect((await night(sim, env, T0 + 2 * DAY, fast)).moved).toEqual([]);
    versions.push('1.0.3');
    const waiting = await night(sim, env, T0 + 4 * DAY, fast);
    expect(waiting.moved).toEqual([]);
    // 1.0.3 would age on day 7; the install has waited since day 0, so max_hold lets it go on day 5.
    expect(decisions(waiting.report).get('fast')).toMatchObject({ version: '1.0.3', eligible_at: iso(T0 + 5 * DAY) });
    const released = await night(sim, env, T0 + 5 * DAY, fast);
    expect(released.moved).toEqual(['fast']);
    expect(decisions(released.report).get('fast')).toMatchObject({ code: 'max_hold', held: false, version: '1.0.3', waiting_since: iso(T0) });
    expect(released.stdout).toContain('sent before its age: fast: max_hold: 1.0.0 → 1.0.3');
    expect(new Set(installed(sim).values())).toEqual(new Set(['1.0.3']));
  });

  it('max_hold frees a theme numbered in four parts too, counted from the oldest version the install has not taken', async () => {
    const { sim } = await start({ sites: 3, seed: 3 });
    shapeFleet(sim, { quad: { versions: ['1.2.3.1', '1.2.3.2'], vulnerable: [] } });
    withoutPlugins(sim);
    const env = simEnv(sim);
    const fast = '{ min_release_age: 3d, max_hold: 5d }';
    const versions = sim.fleet.catalog.get('quad')!.versions;
    expect((await night(sim, env, T0, fast)).moved).toEqual([]);
    versions.push('1.2.3.3');
    expect((await night(sim, env, T0 + 2 * DAY, fast)).moved).toEqual([]);
    versions.push('1.2.3.4');
    expect((await night(sim, env, T0 + 4 * DAY, fast)).moved).toEqual([]);
    // 1.2.3.4 would age on day 7 (and max_hold from it alone on day 9): the install has waited since day 0.
    const released = await night(sim, env, T0 + 5 * DAY, fast);
    expect(released.moved).toEqual(['quad']);
    expect(decisions(released.report).get('quad')).toMatchObject({ code: 'max_hold', version: '1.2.3.4', waiting_since: iso(T0) });
  });

  it('plan records what it sees (a dry run too), and shows first-seen dates and eligibility; the run after it counts from then', async () => {
    const { sim } = await start({ sites: 3, seed: 3 });
    shapeFleet(sim, CATALOG);
    withoutPlugins(sim);
    const env = simEnv(sim);
    const envs = sim.fleet.environments.size;
    const planned = await runCli(['plan', playbook(AGED)], env, { now: () => T0 });
    expect(planned.code, planned.stderr).toBe(0);
    // Dates as ages from the plan's clock; what lets each kind of decision go otherwise, once.
    expect(planned.stdout).toContain(
      `release age (themes): patch-plain 4.1.0 → 4.1.1, first seen just now, eligible in 3 days: age_pending, held on ${envs} environments\n`,
    );
    expect(planned.stdout).toContain(
      `release age (themes): patch-sec 2.0 → 2.0.1, first seen just now, eligible in 3 days: security_bypass, sent on ${envs} environments\n`,
    );
    expect(planned.stdout).toMatch(/^release age \(themes\): .*age_pending: lower with\.min_release_age to take it sooner/m);
    expect(sim.log.filter((e) => e.method !== 'GET')).toEqual([]);
    const dry = await runCli(['run', playbook(AGED), '--dry-run', '--report', join(tempDir(), 'r.json')], env, { now: () => T0 + DAY });
    expect(dry.code).toBe(0);
    expect(dry.stdout).toContain('patch-plain 4.1.0 → 4.1.1, first seen 1 day ago, eligible in 2 days: age_pending');
    expect((await night(sim, env, T0 + 3 * DAY)).moved).toEqual(['patch-plain', 'patch-sec']);
  });

  it('inventory --exposure shows when each update was first seen and when it is eligible', async () => {
    const { sim } = await start({ sites: 3, seed: 3 });
    shapeFleet(sim, CATALOG);
    withoutPlugins(sim);
    const env = simEnv(sim);
    const args = ['inventory', '--exposure', '--min-release-age', '3d'];
    const json = await runCli([...args, '--format', 'json'], env, { now: () => T0 });
    expect(json.code, json.stderr).toBe(0);
    const row = (JSON.parse(json.stdout) as { items: { theme: string; environments: { release_age: unknown }[] }[] }).items[0]!;
    expect(row.theme).toBe('patch-sec');
    expect(row.environments[0]!.release_age).toEqual({ first_seen: iso(T0), eligible: true, eligible_at: iso(T0 + 3 * DAY), code: 'security_bypass' });
    const table = await runCli(args, env, { now: () => T0 + DAY });
    expect(table.stdout).toMatch(new RegExp(`first_seen\\s+eligible\\n[^\\n]*${iso(T0).replace(/\./g, '\\.')}\\s+yes \\(security_bypass\\)`));
    const refused = await runCli(['inventory', '--min-release-age', '3d'], env);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain('--min-release-age: judges the exposure view: add --exposure');
  });

  it('a first-seen store that cannot be written stops the run before anything is sent (exit 2, naming the folder)', async () => {
    const { sim } = await start({ sites: 2, seed: 3 });
    shapeFleet(sim, CATALOG);
    withoutPlugins(sim);
    const env = simEnv(sim);
    // The run lock is taken in the state folder first; only the first-seen store's own folder is broken.
    const notAFolder = join(env.SITEFLEET_STATE_DIR!, 'first-seen');
    writeFileSync(notAFolder, 'a file, not a folder');
    const result = await runCli(['run', playbook(AGED), '--yes', '--report', join(tempDir(), 'r.json')], env);
    expect(result.code, result.stderr).toBe(2);
    expect(result.stderr).toContain(`cannot record first-seen times in ${join(notAFolder, `${sim.companyId}.jsonl`)}`);
    expect(sim.log.filter((e) => e.method !== 'GET')).toEqual([]);
  });

  it('with --coordination the first-seen times live in Redis: another machine (another state folder) counts from the first sighting', async () => {
    const { sim } = await start({ sites: 3, seed: 3 });
    shapeFleet(sim, CATALOG);
    withoutPlugins(sim);
    const r = await redis();
    const coordination = ['--coordination', r.url];
    const machineA = simEnv(sim);
    expect((await night(sim, machineA, T0, AGED, coordination)).moved).toEqual(['patch-sec']);
    expect(existsSync(join(machineA.SITEFLEET_STATE_DIR!, 'first-seen'))).toBe(false);
    // Machine B has never seen these versions itself: alone it would hold them, with Redis it sends.
    const machineB = simEnv(sim);
    const alone = await night(sim, simEnv(sim), T0 + 3 * DAY);
    expect(alone.moved).toEqual([]);
    expect((await night(sim, machineB, T0 + 3 * DAY, AGED, coordination)).moved).toEqual(['patch-plain']);
  });
});
