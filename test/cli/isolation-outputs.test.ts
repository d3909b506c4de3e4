import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { Simulator } from '../../src/sim/server.js';
import { runCli, simEnv, tempDir, writePlaybook } from '../helpers/cli.js';
import { useSimulator } from '../helpers/sim.js';

const start = useSimulator();

/** One live environment with four plugins at 1.0.0, 1.1.0 offered; `p0` 1.1.0 breaks the site. */
function fourPlugins(sim: Simulator) {
  sim.fleet.pluginCatalog.clear();
  const names = ['p0', 'p1', 'p2', 'p3'];
  for (const name of names) sim.fleet.pluginCatalog.set(name, { name, title: name, versions: ['1.0.0', '1.1.0'], vulnerable: new Set() });
  const live = [...sim.fleet.environments.values()].find((e) => e.displayName === 'live')!;
  for (const env of sim.fleet.environments.values()) {
    env.plugins.clear();
    if (env === live) for (const name of names) env.plugins.set(name, { version: '1.0.0', status: 'active', updateStatus: 'none', autoUpdateType: 'none' });
  }
  sim.breakPlugin('p0@1.1.0');
  return live;
}

describe('an isolated site in the outputs, from the CLI against the simulator', () => {
  it('the terminal summary, the run page and the monthly record name the culprit, the version kept, the updates kept and the restores', async () => {
    const { sim } = await start({ sites: 1, seed: 5, operationDelayMs: 20, pageCacheTtlMs: 0 });
    const live = fourPlugins(sim);
    const site = sim.fleet.sites.get(live.siteId)!.displayName;
    const dir = tempDir();
    const reportPath = join(dir, 'r.json');
    const playbook = writePlaybook(
      `version: 1
name: isolate
settings: { rate_limit: 50/s }
tasks:
  - name: plugin updates
    action: plugins.update
    target: { environment: live }
    backup_first: true
    health: { url: "${sim.siteUrl}", attempts: 2, interval: 50ms, on_broken: isolate }
`,
      dir,
    );
    const run = await runCli(['run', playbook, '--yes', '--poll-interval', '50', '--report', reportPath], simEnv(sim));
    const out = run.stdout + run.stderr;
    expect(run.code, out).toBe(1);
    const restores = JSON.parse(readFileSync(reportPath, 'utf8')).results.find((r: { isolation?: unknown }) => r.isolation).isolation.restores as number;
    expect(out).toContain('isolated (1 site):');
    expect(out).toMatch(
      new RegExp(
        `isolated p0 1\\.0\\.0 → 1\\.1\\.0 as the update that broke the site( \\(.*\\))?: p0 stays on 1\\.0\\.0; 3 other updates kept; ${restores} restores`,
      ),
    );

    const pages = await runCli(['report', reportPath, '--html', join(dir, 'run.html')], simEnv(sim));
    expect(pages.code, pages.stderr).toBe(0);
    const runPage = readFileSync(join(dir, 'run.html'), 'utf8');
    expect(runPage).toContain('<h2>Isolated updates (1)</h2>');
    expect(runPage).toMatch(/isolated p0 1\.0\.0 → 1\.1\.0 as the update that broke the site/);

    const record = await runCli(['report', reportPath, '--site', '*', '--html', join(dir, 'record.html')], simEnv(sim));
    expect(record.code, record.stderr).toBe(0);
    const recordPage = readFileSync(join(dir, 'record.html'), 'utf8');
    const section = recordPage.slice(recordPage.indexOf(`data-site="${site}"`));
    expect(section).toContain('Broke the site: p0 1.0.0 → 1.1.0; it stays on 1.0.0.');
    expect(section).toContain('Sent again and kept (3): p1 1.0.0 → 1.1.0, p2 1.0.0 → 1.1.0, p3 1.0.0 → 1.1.0.');
    expect(section).toContain(`Restores: ${restores}.`);
  });
});
