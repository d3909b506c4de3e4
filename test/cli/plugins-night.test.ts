import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { Report } from '../../src/report/report.js';
import { runCli, simEnv, tempDir, writePlaybook } from '../helpers/cli.js';
import { installedPlugins, offeredPlugins, pluginPlaybook, requestsTo } from '../helpers/plugins.js';
import { useSimulator } from '../helpers/sim.js';

const start = useSimulator();

async function run(env: Record<string, string>, yaml: string, flags: string[] = []) {
  const dir = tempDir();
  const reportPath = join(dir, 'r.json');
  const result = await runCli(['run', writePlaybook(yaml, dir), '--yes', '--report', reportPath, ...flags], env);
  return { ...result, report: JSON.parse(readFileSync(reportPath, 'utf8')) as Report };
}

describe('plugins.update against the simulator, from the CLI', () => {
  it('plans from the company plugin listing and installs every offered update except those whose new version is flagged vulnerable', async () => {
    const { sim } = await start({ sites: 5, pluginsPerEnv: 10, seed: 11 });
    const env = simEnv(sim);
    const offered = offeredPlugins(sim);
    const safe = offered.filter((o) => !o.vulnerableUpdate);
    const unsafe = offered.filter((o) => o.vulnerableUpdate);
    // The seed gives both kinds, so the test can tell "all installed" from "all but the vulnerable".
    expect(safe.length).toBeGreaterThan(5);
    expect(unsafe.length).toBeGreaterThan(0);

    // Planning reads the company listing a page at a time, and no environment's own listing.
    const planned = await runCli(['plan', writePlaybook(pluginPlaybook(''))], env);
    expect(planned.code, planned.stderr).toBe(0);
    expect(requestsTo(sim, 'listPlugins').length).toBeGreaterThan(0);
    expect(requestsTo(sim, 'listPlugins').every((e) => e.method === 'GET' && e.path === `/v2/company/${sim.companyId}/wp-plugins`)).toBe(true);
    expect(requestsTo(sim, 'listEnvironmentPlugins')).toEqual([]);

    const versions = installedPlugins(sim);
    const before = sim.log.length;
    const night = await run(env, pluginPlaybook(''));
    expect(night.code, night.stderr).toBe(0);
    expect(requestsTo(sim, 'listEnvironmentPlugins', before)).toEqual([]);
    const after = installedPlugins(sim);
    for (const o of safe) expect(after.get(`${o.env} ${o.name}`), `${o.env} ${o.name}`).toBe(o.latest);
    for (const o of unsafe) expect(after.get(`${o.env} ${o.name}`), `${o.env} ${o.name}`).toBe(o.version);
    // Nothing else moved.
    const touched = new Set(safe.map((o) => `${o.env} ${o.name}`));
    for (const [key, version] of after) if (!touched.has(key)) expect(version, key).toBe(versions.get(key));
    expect(
      offeredPlugins(sim)
        .map((o) => `${o.env} ${o.name}`)
        .sort(),
    ).toEqual(unsafe.map((o) => `${o.env} ${o.name}`).sort());

    // One bulk update per environment with a safe update; each kept its operation and ended succeeded.
    const writes = night.report.results.filter((r) => r.request?.method === 'PUT');
    expect(writes.map((r) => r.target.env_id).sort()).toEqual([...new Set(safe.map((o) => o.env))].sort());
    for (const w of writes) {
      expect(w.request!.path).toBe(`/sites/environments/${w.target.env_id}/plugins/bulk-update`);
      expect(w.status).toBe('succeeded');
      expect(w.operation_id).toMatch(/^wp-plugins:bulk-update-/);
    }
    expect(
      requestsTo(sim, 'bulkUpdatePlugins', before)
        .map((e) => e.operation_id)
        .sort(),
    ).toEqual(writes.map((w) => w.operation_id).sort());
    // The vulnerable ones are named in the reasons of their environment.
    for (const o of unsafe) {
      const reasons = night.report.results.filter((r) => r.target.env_id === o.env).map((r) => r.reason ?? '');
      expect(reasons.join(' '), `${o.env} ${o.name}`).toMatch(new RegExp(`left alone: .*${o.name}: `));
    }
  });
});
