import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { Report } from '../../src/report/report.js';
import type { Simulator } from '../../src/sim/server.js';
import { runCli, simEnv, tempDir, writePlaybook } from '../helpers/cli.js';
import { busiestPlugin, requestsTo } from '../helpers/plugins.js';
import { useSimulator } from '../helpers/sim.js';
import { useRedis, useRedisLinks } from '../helpers/redis.js';
import { redisQuarantine, redisRetry } from '../../src/coord/redis/table-hash.js';

const start = useSimulator();
const redis = useRedis();
const linkTo = useRedisLinks();
const T0 = Date.parse('2026-11-20T02:00:00.000Z');
const HOUR = 3_600_000;

/** One task updating `plugin` pinned (max_bump) on every live environment, with `extra` lines. */
function night(plugin: string, extra = '') {
  return `version: 1\nname: q\nsettings: { rate_limit: 50/s, wait: true }\ntasks:\n  - name: update ${plugin}\n    action: plugins.update\n    target: { environment: live }\n    with: { plugins: ${plugin}, max_bump: major }\n    max_failures: 100\n${extra}`;
}

async function run(yaml: string, env: Record<string, string>, now: number) {
  const dir = tempDir();
  const reportPath = join(dir, 'r.json');
  const result = await runCli(['run', writePlaybook(yaml, dir), '--yes', '--poll-interval', '50', '--report', reportPath], env, { now: () => now });
  return { ...result, out: result.stdout + result.stderr, report: JSON.parse(readFileSync(reportPath, 'utf8')) as Report };
}

const plan = (yaml: string, env: Record<string, string>, now: number) => runCli(['plan', writePlaybook(yaml)], env, { now: () => now });
const writesOf = (sim: Simulator, from: number) => requestsTo(sim, 'updatePlugin', from).length;

describe('quarantine: a version that broke a site is sent nowhere again until released', () => {
  it('recorded from the night it broke sites and was restored; the next plan and run leave it alone everywhere; release sends it again', async () => {
    const { sim } = await start({ sites: 6, pluginsPerEnv: 10, seed: 5 });
    const { plugin, envs } = busiestPlugin(sim);
    expect(envs.length).toBeGreaterThan(1);
    const broken = sim.breakPlugin(`${plugin}@latest`);
    const version = broken.split('@')[1]!;
    const env = simEnv(sim);
    const guards = `    backup_first: true\n    health: { url: "${sim.siteUrl}", attempts: 2, interval: 50ms, on_broken: restore }\n`;
    const first = await run(night(plugin, guards), env, T0);
    expect(first.code, first.out).toBe(1);
    expect(first.report.results.filter((r) => r.restored?.status === 'succeeded')).toHaveLength(envs.length);

    const listed = await runCli(['quarantine', 'list', '--format', 'json'], env);
    expect(listed.code, listed.stderr).toBe(0);
    const held = JSON.parse(listed.stdout) as { kind: string; name: string; version: string; environments: number; since: string; why: string }[];
    expect(held).toEqual([expect.objectContaining({ kind: 'plugin', name: plugin, version, environments: envs.length, since: new Date(T0).toISOString() })]);
    expect(held[0]!.why).toMatch(/HTTP 500|Fatal/);
    expect((await runCli(['quarantine', 'list'], env)).stdout).toContain(`plugin ${plugin}@${version}: broke `);

    // The next night: nothing sent, every environment says why, with the override.
    const planned = await plan(night(plugin), env, T0 + 24 * HOUR);
    expect(planned.code, planned.stderr).toBe(0);
    expect(planned.stdout).toContain(
      `quarantined (update ${plugin}), sitefleet quarantine release ${plugin}@${version} --kind plugin: plugin ${plugin} ${version} left alone on ${envs.length} environments: it broke `,
    );
    const before = sim.log.length;
    const second = await run(night(plugin), env, T0 + 24 * HOUR);
    expect(second.code, second.out).toBe(0);
    expect(writesOf(sim, before)).toBe(0);
    expect(second.report.results.filter((r) => r.withheld).map((r) => r.withheld![0]!.code)).toEqual(envs.map(() => 'quarantined'));

    // Released: the plan sends it again, everywhere.
    const wrongKind = await runCli(['quarantine', 'release', `${plugin}@${version}`, '--kind', 'theme'], env);
    expect([wrongKind.code, wrongKind.stderr]).toEqual([2, expect.stringContaining(`theme ${plugin}@${version} is not quarantined`)]);
    const released = await runCli(['quarantine', 'release', `${plugin}@${version}`], env, { now: () => T0 + 25 * HOUR });
    expect([released.code, released.stdout]).toEqual([
      0,
      `released plugin ${plugin}@${version}: the next runs send it again, the ${envs.length} sites it broke included\n`,
    ]);
    const again = await runCli(['quarantine', 'release', `${plugin}@${version}`], env);
    expect([again.code, again.stderr]).toEqual([
      2,
      expect.stringContaining(`${plugin}@${version} is not quarantined: \`sitefleet quarantine list\` shows what is`),
    ]);
    const after = await plan(night(plugin), env, T0 + 26 * HOUR);
    expect(after.stdout).not.toContain('quarantined');
    expect(after.stdout).toContain(`${envs.length} calls would be sent`);
  });

  it('a name quarantined as a theme and as a plugin: release refuses to guess', async () => {
    const { sim } = await start({ sites: 2 });
    const env = simEnv(sim);
    const { quarantineFile } = await import('../../src/coord/quarantine-file.js');
    const at = T0;
    await quarantineFile(env.SITEFLEET_STATE_DIR!, sim.companyId).record([
      { theme: 'astra', version: '2.0.0', env_id: 'e1', at, why: 'broke' },
      { plugin: 'astra', version: '2.0.0', env_id: 'e2', at, why: 'broke' },
    ]);
    const ambiguous = await runCli(['quarantine', 'release', 'astra@2.0.0'], env);
    expect([ambiguous.code, ambiguous.stderr]).toEqual([
      2,
      expect.stringContaining('astra@2.0.0 is quarantined as a theme and as a plugin: say which with --kind theme|plugin'),
    ]);
    expect((await runCli(['quarantine', 'release', 'astra@2.0.0', '--kind', 'plugin'], env)).code).toBe(0);
    expect(JSON.parse((await runCli(['quarantine', 'list', '--format', 'json'], env)).stdout)).toEqual([
      expect.objectContaining({ kind: 'theme', name: 'astra' }),
    ]);
  });
});

describe('what the run records stays true: a break is dated when it happened', () => {
  it('the report names what the night quarantined; `status` and `resume` of it after a release record it again as it was: the release stands', async () => {
    const { sim } = await start({ sites: 6, pluginsPerEnv: 10, seed: 5 });
    const { plugin, envs } = busiestPlugin(sim);
    const version = sim.breakPlugin(`${plugin}@latest`).split('@')[1]!;
    const env = simEnv(sim);
    const guards = `    backup_first: true\n    health: { url: "${sim.siteUrl}", attempts: 2, interval: 50ms, on_broken: restore }\n`;
    const dir = tempDir();
    const reportPath = join(dir, 'r.json');
    const first = await runCli(['run', writePlaybook(night(plugin, guards), dir), '--yes', '--poll-interval', '50', '--report', reportPath], env, {
      now: () => T0,
    });
    expect(first.code, first.stdout + first.stderr).toBe(1);
    const released = await runCli(['quarantine', 'release', `${plugin}@${version}`], env, { now: () => T0 + 25 * HOUR });
    expect(released.code, released.stderr).toBe(0);
    // The next day, someone looks at the night's report again, then resumes it (nothing left to send).
    const status = await runCli(['status', reportPath], env, { now: () => T0 + 30 * HOUR });
    expect(status.code, status.stderr).toBe(1);
    expect((await runCli(['quarantine', 'list'], env)).stdout).toBe('nothing is quarantined\n');
    const resumed = await runCli(['resume', reportPath, '--yes'], env, { now: () => T0 + 31 * HOUR });
    expect(resumed.stdout, resumed.stderr).toContain('nothing left to send');
    expect((await runCli(['quarantine', 'list'], env)).stdout).toBe('nothing is quarantined\n');
    expect((await plan(night(plugin), env, T0 + 32 * HOUR)).stdout).toContain(`${envs.length} calls would be sent`);
    // The report, as the resume left it, names each environment the version broke, dated as the night journaled it.
    const report = JSON.parse(readFileSync(reportPath, 'utf8')) as Report;
    expect(report.quarantined?.map((q) => q.env_id).sort()).toEqual([...envs].sort());
    expect(report.quarantined![0]).toEqual(
      expect.objectContaining({
        kind: 'plugin',
        name: plugin,
        version,
        at: new Date(T0).toISOString(),
        why: expect.stringMatching(/HTTP 500|Fatal/) as unknown,
      }),
    );
  });

  it('a line of the quarantine that cannot be read holds what it names, and every plan says which file and line', async () => {
    const { sim } = await start({ sites: 4, pluginsPerEnv: 10, seed: 5 });
    const { plugin, envs } = busiestPlugin(sim);
    const version = sim.fleet.pluginCatalog.get(plugin)!.versions.at(-1)!;
    const env = simEnv(sim);
    const { quarantineFile } = await import('../../src/coord/quarantine-file.js');
    const store = quarantineFile(env.SITEFLEET_STATE_DIR!, sim.companyId);
    // A break cut short by a crash: its time and why are lost, its item and version are there.
    const { mkdirSync, writeFileSync } = await import('node:fs');
    mkdirSync(join(store.where, '..'), { recursive: true });
    writeFileSync(store.where, `{"v":1,"plugin":${JSON.stringify(plugin)},"version":${JSON.stringify(version)},"env_id":"e1","si\n`);
    const planned = await plan(night(plugin), env, T0);
    expect(planned.code, planned.stderr).toBe(0);
    expect(planned.stderr).toContain(`sitefleet: warning: ${store.where} line 1: a line of the company's quarantine that cannot be read`);
    expect(planned.stderr).toContain(`plugin ${plugin} ${version} is held on every environment`);
    expect(planned.stdout).toContain(
      `unreadable_record (update ${plugin}), repair or delete ${store.where} line 1: plugin ${plugin} ${version} left alone on ${envs.length} environments`,
    );
    expect(planned.stdout).toContain('0 calls would be sent');
    expect((await runCli(['quarantine', 'list'], env)).stderr).toContain(`${store.where} line 1`);
  });
});

describe('quarantine shared through Redis (--coordination)', () => {
  it('a break one machine recorded is what every machine naming the Redis lists and plans by', async () => {
    const { sim } = await start({ sites: 3, pluginsPerEnv: 10, seed: 5 });
    const { plugin, envs } = busiestPlugin(sim);
    const version = sim.breakPlugin(`${plugin}@latest`).split('@')[1]!;
    const shared = { ...simEnv(sim), SITEFLEET_COORDINATION: (await redis()).url };
    const guards = `    backup_first: true\n    health: { url: "${sim.siteUrl}", attempts: 2, interval: 50ms, on_broken: restore }\n`;
    expect((await run(night(plugin, guards), shared, T0)).code).toBe(1);
    // Another machine: its own (empty) state folder, the same Redis.
    const other = { ...shared, SITEFLEET_STATE_DIR: tempDir() };
    const listed = JSON.parse((await runCli(['quarantine', 'list', '--format', 'json'], other)).stdout) as { name: string; environments: number }[];
    expect(listed).toEqual([expect.objectContaining({ name: plugin, version, environments: envs.length })]);
    expect((await plan(night(plugin), other, T0 + 24 * HOUR)).stdout).toContain('0 calls would be sent');
    // Without the Redis, that machine's own folder knows of nothing.
    const { SITEFLEET_COORDINATION: _, ...alone } = other;
    expect((await runCli(['quarantine', 'list'], alone)).stdout).toBe('nothing is quarantined\n');
    expect((await runCli(['quarantine', 'release', `${plugin}@${version}`], other)).code).toBe(0);
    expect((await plan(night(plugin), other, T0 + 25 * HOUR)).stdout).toContain(`${envs.length} calls would be sent`);
  });
});

describe('retry_later: a write that failed for a reason that may pass waits its backoff', () => {
  it('an operation the service could not complete: the next plan leaves it alone on that environment until its date; then sent again', async () => {
    const { sim } = await start({ sites: 4, pluginsPerEnv: 10, seed: 7, failOperations: 1 });
    const { plugin, envs } = busiestPlugin(sim);
    const env = simEnv(sim);
    const first = await run(night(plugin), env, T0);
    expect(first.code, first.out).toBe(1);
    const writes = first.report.results.filter((r) => r.request);
    expect(writes.map((r) => r.error?.split(':')[0])).toEqual(envs.map(() => 'OperationFailed'));
    const retries = JSON.parse((await runCli(['retry', 'list', '--format', 'json'], env)).stdout) as { name: string; env_id: string }[];
    expect(retries.map((r) => r.env_id).sort()).toEqual([...envs].sort());

    const tomorrowEarly = await plan(night(plugin), env, T0 + 12 * HOUR);
    expect(tomorrowEarly.stdout).toContain(`retry_later (update ${plugin}), sitefleet retry clear ${plugin}@`);
    expect(tomorrowEarly.stdout).toContain(`left alone on ${envs.length} environments: not before ${new Date(T0 + 24 * HOUR).toISOString()}, it failed once`);
    expect(tomorrowEarly.stdout).toContain('0 calls would be sent');
    // A second failure in a row waits two days.
    const dayAfter = await run(night(plugin), env, T0 + 24 * HOUR);
    expect(dayAfter.code, dayAfter.out).toBe(1);
    const thirdDay = await plan(night(plugin), env, T0 + 60 * HOUR);
    expect(thirdDay.stdout).toContain(`failed 2 times in a row`);
    expect(thirdDay.stdout).toContain(`not before ${new Date(T0 + 72 * HOUR).toISOString()}`);
    expect((await plan(night(plugin), env, T0 + 72 * HOUR)).stdout).toContain(`${envs.length} calls would be sent`);
    // Cleared by a person: sent at once.
    const version = sim.fleet.pluginCatalog.get(plugin)!.versions.at(-1)!;
    const cleared = await runCli(['retry', 'clear', `${plugin}@${version}`], env, { now: () => T0 + 61 * HOUR });
    expect(cleared.code, cleared.stderr).toBe(0);
    expect((await plan(night(plugin), env, T0 + 62 * HOUR)).stdout).toContain(`${envs.length} calls would be sent`);
  });

  it('a success of the item on an environment clears its failures there, and only there', async () => {
    const { sim } = await start({ sites: 4, pluginsPerEnv: 10, seed: 7 });
    const { plugin, envs } = busiestPlugin(sim);
    const env = simEnv(sim);
    const version = sim.fleet.pluginCatalog.get(plugin)!.versions.at(-1)!;
    const { retryFile } = await import('../../src/coord/quarantine-file.js');
    // Failed a month ago on the first environment (its day has come), and on one the task does not
    // update, where the listing still offers that version (else the plan would clear it as gone).
    const staging = [...sim.fleet.environments.values()].find((e) => e.displayName !== 'live')!;
    staging.plugins.set(plugin, { version: sim.fleet.pluginCatalog.get(plugin)!.versions[0]!, status: 'active', updateStatus: '', autoUpdateType: '' });
    const elsewhere = staging.id;
    const failed = (env_id: string) => ({ plugin, version, env_id, run: 'r0', at: T0 - 30 * 24 * HOUR, why: 'HTTP 503' });
    await retryFile(env.SITEFLEET_STATE_DIR!, sim.companyId).record([failed(envs[0]!), failed(elsewhere)]);
    const night1 = await run(night(plugin), env, T0);
    expect(night1.code, night1.out).toBe(0);
    const left = JSON.parse((await runCli(['retry', 'list', '--format', 'json'], env)).stdout) as { env_id: string }[];
    expect(left.map((f) => f.env_id)).toEqual([elsewhere]);
  });
});

describe('neither store only grows: what the fleet moved past folds away before the next plan', () => {
  /** A release newer than every one `name` had: what the listing offers from now on. */
  function publish(sim: Simulator, name: string): string {
    const versions = sim.fleet.pluginCatalog.get(name)!.versions;
    const newer = `${Number(versions.at(-1)!.split('.')[0]) + 1}.0.0`;
    versions.push(newer);
    return newer;
  }

  it('a quarantined version superseded by a newer one and offered nowhere leaves the hash, its release stays; one still offered stays, and is withheld', async () => {
    const { sim } = await start({ sites: 4, pluginsPerEnv: 10, seed: 5 });
    const { plugin, envs } = busiestPlugin(sim);
    const version = sim.breakPlugin(`${plugin}@latest`).split('@')[1]!;
    const url = (await redis()).url;
    const shared = { ...simEnv(sim), SITEFLEET_COORDINATION: url };
    const guards = `    backup_first: true\n    health: { url: "${sim.siteUrl}", attempts: 2, interval: 50ms, on_broken: restore }\n`;
    expect((await run(night(plugin, guards), shared, T0)).code).toBe(1);
    // Another plugin's latest version, quarantined by hand: the listing still offers it.
    const offered = (n: string, latest: string) =>
      [...sim.fleet.environments.values()].some(
        (e) => e.displayName === 'live' && e.plugins.get(n)?.status === 'active' && e.plugins.get(n)!.version !== latest,
      );
    const [other, { versions }] = [...sim.fleet.pluginCatalog].find(
      ([n, item]) => n !== plugin && !item.vulnerable.has(item.versions.at(-1)!) && offered(n, item.versions.at(-1)!),
    )!;
    const otherVersion = versions.at(-1)!;
    const link = await linkTo(url);
    const store = redisQuarantine(link, sim.companyId);
    await store.record([{ plugin: other, version: otherVersion, env_id: envs[0]!, at: T0, why: 'broke' }]);
    expect(await link.redis.hlen(store.where)).toBe(envs.length + 1);

    const heldNow = async () =>
      (JSON.parse((await runCli(['quarantine', 'list', '--format', 'json'], shared)).stdout) as { name: string; version: string }[]).map(
        (q) => `${q.name}@${q.version}`,
      );
    expect(await heldNow()).toEqual([`${plugin}@${version}`, `${other}@${otherVersion}`].sort());
    publish(sim, plugin);
    const planned = await plan(night(plugin), shared, T0 + 24 * HOUR);
    expect(planned.code, planned.stderr).toBe(0);
    // Sent to every live environment where it is active: those it broke, and those that ran the quarantined version already.
    const active = [...sim.fleet.environments.values()].filter((e) => e.displayName === 'live' && e.plugins.get(plugin)?.status === 'active');
    expect(planned.stdout).toContain(`${active.length} calls would be sent`);
    expect(planned.stdout).not.toContain('quarantined');
    // The other's break, and the release that folded the superseded version's away (a `status` of that night must not bring them back).
    expect(await link.redis.hlen(store.where)).toBe(2);
    expect(await heldNow()).toEqual([`${other}@${otherVersion}`]);
    // What still holds is still withheld, and the store stays as it is.
    const otherPlan = await plan(night(other), shared, T0 + 24 * HOUR);
    expect(otherPlan.stdout).toContain(`quarantined (update ${other}), sitefleet quarantine release ${other}@${otherVersion} --kind plugin`);
    expect(await link.redis.hlen(store.where)).toBe(2);
  });

  it('a failure on an environment that was deleted is cleared; those on the others still wait their backoff', async () => {
    const { sim } = await start({ sites: 6, pluginsPerEnv: 10, seed: 7, failOperations: 1 });
    const { plugin, envs } = busiestPlugin(sim);
    expect(envs.length).toBeGreaterThan(2);
    const url = (await redis()).url;
    const shared = { ...simEnv(sim), SITEFLEET_COORDINATION: url };
    expect((await run(night(plugin), shared, T0)).code).toBe(1);
    const link = await linkTo(url);
    const store = redisRetry(link, sim.companyId);
    expect(await link.redis.hlen(store.where)).toBe(envs.length);

    const [deleted, ...kept] = envs;
    const site = sim.fleet.sites.get(sim.fleet.environments.get(deleted!)!.siteId)!;
    site.envIds = site.envIds.filter((id) => id !== deleted);
    sim.fleet.environments.delete(deleted!);
    const planned = await plan(night(plugin), shared, T0 + 12 * HOUR);
    expect(planned.code, planned.stderr).toBe(0);
    expect(planned.stdout).toContain(`left alone on ${kept.length} environments: not before ${new Date(T0 + 24 * HOUR).toISOString()}, it failed once`);
    expect(planned.stdout).toContain('0 calls would be sent');
    // Those that wait, and the clear of the deleted environment's.
    expect(await link.redis.hlen(store.where)).toBe(kept.length + 1);
    const retries = JSON.parse((await runCli(['retry', 'list', '--format', 'json'], shared)).stdout) as { env_id: string }[];
    expect(retries.map((r) => r.env_id).sort()).toEqual([...kept].sort());
  });
});
