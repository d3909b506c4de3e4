import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { Report } from '../../src/report/report.js';
import type { Simulator } from '../../src/sim/server.js';
import { runCli, simEnv, startCliInProcess, tempDir, writePlaybook } from '../helpers/cli.js';
import { useSimulator, whenAnswered } from '../helpers/sim.js';
import { shapeFleet } from '../helpers/themes.js';

const start = useSimulator();

/** One theme and two plugins with an update on every live environment. */
function shape(sim: Simulator): void {
  shapeFleet(sim, { calm: { versions: ['1.0.0', '1.0.1'], vulnerable: [] } });
  sim.fleet.pluginCatalog.clear();
  for (const [name, versions] of [
    ['forms', ['1.0.0', '1.1.0']],
    ['cache', ['2.0.0', '2.1.0']],
  ] as const)
    sim.fleet.pluginCatalog.set(name, { name, title: name, versions: [...versions], vulnerable: new Set() });
  for (const env of sim.fleet.environments.values()) {
    env.plugins.clear();
    for (const [name, version] of [
      ['forms', '1.0.0'],
      ['cache', '2.0.0'],
    ] as const)
      env.plugins.set(name, { version, status: 'active', updateStatus: 'none', autoUpdateType: 'none' });
  }
}

/**
 * rollout.together: the theme write and the plugin write of an environment share one look after. A
 * halt (two Ctrl-C) during that look's cache clear held both `not_looked`; resume then found nothing
 * to do for them in the group's turn, and said so night after night.
 */
describe('writes looked at together, halted before their look', () => {
  it('resume takes the group look the halt kept from happening, and both writes end', async () => {
    const { sim } = await start({ sites: 1, seed: 5, operationDelayMs: 50 });
    shape(sim);
    const dir = tempDir();
    const path = join(dir, 'r.json');
    const yaml =
      `version: 1\nname: n\nsettings: { rate_limit: 50/s }\ntasks:\n` +
      `  - name: themes\n    action: themes.update\n    target: { environment: live }\n    backup_first: true\n` +
      `    health: { url: "${sim.siteUrl}", attempts: 2, interval: 50ms, on_broken: restore }\n` +
      `  - name: plugins\n    action: plugins.update\n    target: { environment: live }\n    rollout: { together: themes }\n`;
    const running = await startCliInProcess(['run', writePlaybook(yaml, dir), '--yes', '--poll-interval', '50', '--report', path], simEnv(sim));
    whenAnswered(sim, 'clearCache', 1, () => {
      running.interrupt();
      running.interrupt();
    });
    expect((await running.done).code).toBe(130);
    const writes = (): Report['results'] =>
      (JSON.parse(readFileSync(path, 'utf8')) as Report).results.filter((r) => r.step_id !== null && r.request?.method !== 'POST');
    expect(writes().filter((r) => r.held?.code === 'not_looked').length).toBeGreaterThan(0);
    const resumed = await runCli(['resume', path, '--yes', '--poll-interval', '50'], simEnv(sim));
    expect(resumed.code, resumed.stdout + resumed.stderr).toBe(0);
    for (const r of writes()) expect(r, JSON.stringify(r)).toMatchObject({ status: 'succeeded' });
    expect(writes().some((r) => r.health?.outcome === 'healthy')).toBe(true);
  }, 90_000);
});
