import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { Plan } from '../../src/plan/plan.js';
import type { Report } from '../../src/report/report.js';
import type { Simulator } from '../../src/sim/server.js';
import { runCli, simEnv, tempDir, writePlaybook } from '../helpers/cli.js';
import { installedPlugins, offeredPlugins, pluginPlaybook, requestsTo } from '../helpers/plugins.js';
import { useSimulator } from '../helpers/sim.js';

const start = useSimulator();

async function run(sim: Simulator, yaml: string, env = simEnv(sim)) {
  const dir = tempDir();
  const reportPath = join(dir, 'r.json');
  const result = await runCli(['run', writePlaybook(yaml, dir), '--yes', '--poll-interval', '50', '--report', reportPath], env);
  return { ...result, report: JSON.parse(readFileSync(reportPath, 'utf8')) as Report };
}

const writesOf = (report: Report) => report.results.filter((r) => r.request?.method === 'PUT');

describe('where the company plugin listing cannot be used', () => {
  it.each(['absent', 'no-ids'] as const)(
    'pluginListing %s: the plan reads each selected environment’s own listing, says so, and the run still updates',
    async (pluginListing) => {
      const { sim } = await start({ sites: 4, pluginsPerEnv: 6, seed: 11, pluginListing });
      const env = simEnv(sim);
      const live = [...sim.fleet.environments.values()].filter((e) => e.displayName === 'live').map((e) => e.id);
      const yaml = pluginPlaybook('', '{ rate_limit: 50/s, wait: true }').replace('target: all', 'target: { environment: live }');
      const out = join(tempDir(), 'plan.json');
      const planned = await runCli(['plan', writePlaybook(yaml), '--out', out], env);
      expect(planned.code, planned.stderr).toBe(0);
      const plan = JSON.parse(readFileSync(out, 'utf8')) as Plan;
      expect(plan.inventory.plugins_from_environments).toEqual(expect.any(String));
      const plugins = new Set([...sim.fleet.environments.values()].filter((e) => live.includes(e.id)).flatMap((e) => [...e.plugins.keys()]));
      expect(plan.inventory.plugins).toBe(plugins.size);
      // The terminal says so too, with the count read.
      expect(planned.stdout.split('\n')[0]).toContain(
        `${plugins.size} plugins read from each environment's own listing (${plan.inventory.plugins_from_environments})`,
      );
      // One read of each selected environment's own listing, none of the others.
      expect(
        requestsTo(sim, 'listEnvironmentPlugins')
          .map((e) => e.path.split('/')[4])
          .sort(),
      ).toEqual([...live].sort());

      const safe = offeredPlugins(sim).filter((o) => live.includes(o.env) && !o.vulnerableUpdate);
      expect(safe.length).toBeGreaterThan(0);
      const night = await run(sim, yaml, env);
      expect(night.code, night.stderr).toBe(0);
      for (const o of safe) expect(installedPlugins(sim).get(`${o.env} ${o.name}`)).toBe(o.latest);
      for (const w of writesOf(night.report))
        expect(w).toMatchObject({ status: 'succeeded', operation_id: expect.stringMatching(/^wp-plugins:bulk-update-/) as unknown });
    },
  );
});
