import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { Report } from '../../src/report/report.js';
import { restoreBound } from '../../src/run/isolation.js';
import type { Simulator } from '../../src/sim/server.js';
import { runCli, simEnv, tempDir, writePlaybook } from '../helpers/cli.js';
import { busiestPlugin, offeredPlugins, requestsTo } from '../helpers/plugins.js';
import { useSimulator } from '../helpers/sim.js';

const start = useSimulator();

async function run(sim: Simulator, yaml: string, env = simEnv(sim)) {
  const dir = tempDir();
  const reportPath = join(dir, 'r.json');
  const result = await runCli(['run', writePlaybook(yaml, dir), '--yes', '--poll-interval', '50', '--report', reportPath], env);
  return { ...result, out: result.stdout + result.stderr, report: JSON.parse(readFileSync(reportPath, 'utf8')) as Report };
}

/** Every plugin update on every live environment, in bulk, isolating what breaks a site. */
function isolatingNight(sim: Simulator): string {
  return `version: 1
name: isolate
settings: { rate_limit: 50/s }
tasks:
  - name: plugin updates
    action: plugins.update
    target: { environment: live }
    backup_first: true
    health: { url: "${sim.siteUrl}", attempts: 2, interval: 50ms, on_broken: isolate }
    max_failures: 100
`;
}

describe('health.on_broken: isolate, a plugin whose new version breaks every site where it is active', () => {
  it('on each broken site: the culprit back on its old version, every other update in, the site healthy, within 1 + ⌈log2 n⌉ restores', async () => {
    const { sim } = await start({ sites: 6, pluginsPerEnv: 12, seed: 5, operationDelayMs: 20 });
    const { plugin, envs } = busiestPlugin(sim);
    const offered = offeredPlugins(sim).filter((o) => !o.vulnerableUpdate);
    const latest = sim.fleet.pluginCatalog.get(plugin)!.versions.at(-1)!;
    sim.breakPlugin(`${plugin}@${latest}`);
    const { code, out, report } = await run(sim, isolatingNight(sim));
    expect(code, out).toBe(1);
    for (const id of envs) {
      const env = sim.fleet.environments.get(id)!;
      const write = report.results.find((r) => r.target.env_id === id && r.request?.method === 'PUT')!;
      const n = offered.filter((o) => o.env === id).length;
      const old = offered.find((o) => o.env === id && o.name === plugin)!.version;
      expect(write, `${id}: ${JSON.stringify(write, null, 1).slice(0, 3000)}`).toMatchObject({
        status: 'failed',
        isolation: { outcome: 'found', culprits: [{ plugin, from: old, to: latest }] },
      });
      expect(write.isolation!.restores).toBeLessThanOrEqual(restoreBound(n));
      expect(requestsTo(sim, 'restoreBackup').filter((e) => e.path.split('/')[4] === id).length).toBe(write.isolation!.restores);
      // The culprit runs its old version; every other update offered here is in.
      expect(env.plugins.get(plugin)!.version).toBe(old);
      for (const o of offered.filter((o) => o.env === id && o.name !== plugin)) expect(env.plugins.get(o.name)!.version, `${id} ${o.name}`).toBe(o.latest);
      expect(write.reason).toContain(`isolated: ${plugin} ${old} → ${latest} broke the site`);
      const page = await fetch(sim.siteUrl.replace('{{domain}}', env.domains[0]!.name));
      expect(page.status, id).toBe(200);
    }
  });
});
