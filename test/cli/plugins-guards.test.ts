import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { Report } from '../../src/report/report.js';
import type { Simulator } from '../../src/sim/server.js';
import { runCli, simEnv, tempDir, writePlaybook } from '../helpers/cli.js';
import { busiestPlugin, requestsTo, stagedAkismet, guardedPluginNight } from '../helpers/plugins.js';
import { useSimulator } from '../helpers/sim.js';
import { HOUR, T0 } from '../helpers/staging.js';

const start = useSimulator();

async function run(sim: Simulator, yaml: string, env = simEnv(sim), now?: () => number) {
  const dir = tempDir();
  const reportPath = join(dir, 'r.json');
  const result = await runCli(['run', writePlaybook(yaml, dir), '--yes', '--poll-interval', '50', '--report', reportPath], env, { now });
  return { ...result, out: result.stdout + result.stderr, report: JSON.parse(readFileSync(reportPath, 'utf8')) as Report };
}

describe('plugins.update with health: a plugin that breaks sites', () => {
  it('is restored from the backup taken before on each site it broke, and the report says so', async () => {
    const { sim } = await start({ sites: 8, pluginsPerEnv: 12, seed: 5, operationDelayMs: 50 });
    const { plugin, envs } = busiestPlugin(sim);
    expect(envs.length).toBeGreaterThan(1);
    const old = new Map(envs.map((id) => [id, sim.fleet.environments.get(id)!.plugins.get(plugin)!.version]));
    const broken = sim.breakPlugin(`${plugin}@latest`);
    expect(broken).toBe(`${plugin}@${sim.fleet.pluginCatalog.get(plugin)!.versions.at(-1)!}`);
    const guards = `    backup_first: true\n    health: { url: "${sim.siteUrl}", attempts: 2, interval: 50ms, on_broken: restore }\n    max_failures: 100\n`;
    const yaml = guardedPluginNight(sim, 'plugin-break', plugin, guards);
    const { code, out, report } = await run(sim, yaml);
    expect(code, out).toBe(1);
    const writes = report.results.filter((r) => r.role !== 'backup' && r.request?.method === 'PUT');
    expect(writes.map((w) => w.target.env_id).sort()).toEqual([...envs].sort());
    for (const w of writes) {
      const env = sim.fleet.environments.get(w.target.env_id!)!;
      const backup = env.backups.find((b) => b.note === w.restore_point!.tag)!;
      expect(w, env.id).toMatchObject({
        status: 'failed',
        operation_id: expect.stringMatching(/^wp-plugins:bulk-update-/) as unknown,
        health: { outcome: 'unhealthy' },
        restored: { backup_id: backup.id, status: 'succeeded', health: { outcome: 'healthy' } },
      });
      // The environment runs the version it had before the write again.
      expect(env.plugins.get(plugin)!.version).toBe(old.get(env.id));
      expect(out).toContain(`restored from backup ${backup.id}: healthy again`);
      expect(out).toContain('health: HTTP 500');
    }
    expect(
      requestsTo(sim, 'restoreBackup')
        .map((e) => e.path.split('/')[4])
        .sort(),
    ).toEqual([...envs].sort());
  });
});

describe('plugins.update with health on a plugin that keeps sites healthy', () => {
  it('each write keeps its operation id, is checked healthy after it, and ends succeeded', async () => {
    const { sim } = await start({ sites: 4, pluginsPerEnv: 8, seed: 5, operationDelayMs: 50 });
    const { plugin, envs } = busiestPlugin(sim);
    const yaml = guardedPluginNight(sim, 'plugin-healthy', plugin, `    health: { url: "${sim.siteUrl}", attempts: 2, interval: 50ms }\n`);
    const { code, out, report } = await run(sim, yaml);
    expect(code, out).toBe(0);
    const writes = report.results.filter((r) => r.request?.method === 'PUT');
    expect(writes.map((w) => w.target.env_id).sort()).toEqual([...envs].sort());
    for (const w of writes)
      expect(w).toMatchObject({
        status: 'succeeded',
        operation_id: expect.stringMatching(/^wp-plugins:bulk-update-/) as unknown,
        health: { outcome: 'healthy' },
      });
    const latest = sim.fleet.pluginCatalog.get(plugin)!.versions.at(-1)!;
    for (const id of envs) expect(sim.fleet.environments.get(id)!.plugins.get(plugin)!.version).toBe(latest);
  });
});

describe('rollout.staging_first with a plugin that breaks sites', () => {
  it('breaks staging only: restored there, and live never takes it on the nights after', async () => {
    const { sim } = await start({ sites: 4, pluginsPerEnv: 4, seed: 11 });
    const { name, stagings, stagedLive, yaml } = stagedAkismet(sim);
    sim.breakPlugin(`${name}@5.0.1`);
    expect(stagings.length).toBeGreaterThan(0);
    const env = simEnv(sim);
    const first = await run(sim, yaml, env, () => T0);
    expect(first.code, first.stdout).not.toBe(0);
    // Each staging was written, broke, and was put back.
    for (const s of stagings) expect(s.plugins.get(name)!.version, s.id).toBe('5.0.0');
    expect(
      requestsTo(sim, 'restoreBackup')
        .map((e) => e.path.split('/')[4])
        .sort(),
    ).toEqual(stagings.map((s) => s.id).sort());
    const later = sim.log.length;
    await run(sim, yaml, env, () => T0 + 24 * HOUR);
    await run(sim, yaml, env, () => T0 + 48 * HOUR);
    for (const l of stagedLive) expect(l.plugins.get(name)!.version, l.id).toBe('5.0.0');
    const sentToLive = requestsTo(sim, 'updatePlugin', later).filter((e) => stagedLive.some((l) => e.path.split('/')[4] === l.id));
    expect(sentToLive).toEqual([]);
  });
});
