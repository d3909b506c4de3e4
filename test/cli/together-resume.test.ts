import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { Report } from '../../src/report/report.js';
import type { Simulator } from '../../src/sim/server.js';
import { runCli, simEnv, tempDir, writePlaybook } from '../helpers/cli.js';
import { useSimulator } from '../helpers/sim.js';
import { shapeFleet } from '../helpers/themes.js';

const start = useSimulator();

/** Every environment: theme calm 1.0.0 (1.0.1 offered), plugin forms 1.0.0 (1.1.0 offered). */
function shape(sim: Simulator): void {
  shapeFleet(sim, { calm: { versions: ['1.0.0', '1.0.1'], vulnerable: [] } });
  sim.fleet.pluginCatalog.clear();
  sim.fleet.pluginCatalog.set('forms', { name: 'forms', title: 'forms', versions: ['1.0.0', '1.1.0'], vulnerable: new Set() });
  for (const env of sim.fleet.environments.values()) {
    env.plugins.clear();
    env.plugins.set('forms', { version: '1.0.0', status: 'active', updateStatus: 'none', autoUpdateType: 'none' });
  }
}

/** The plugin task guards (backup, look); the theme task joins its turn. */
const TASKS = (sim: Simulator) =>
  `version: 1\nname: n\nsettings: { rate_limit: 50/s }\ntasks:\n` +
  `  - name: plugins\n    action: plugins.update\n    target: { environment: live }\n    backup_first: true\n` +
  `    health: { url: "${sim.siteUrl}", attempts: 2, interval: 50ms, on_broken: restore }\n` +
  `  - name: themes\n    action: themes.update\n    target: { environment: live }\n    rollout: { together: plugins }\n`;

type Line = { t: string; step?: string; result?: { status: string } };

describe('rollout.together resumed in the middle of a group', () => {
  it('the process died after the plugin write, before the theme write joined to it: the site the plugin broke is no baseline, neither write is done', async () => {
    // The company plugin listing lags (as the vendor says it may): the plan made again at resume still
    // shows the plugin update, so the theme write still joins it.
    const { sim } = await start({ sites: 1, seed: 5, operationDelayMs: 0, pluginListingLagMs: 12 * 3_600_000, pageCacheTtlMs: 0 });
    shape(sim);
    sim.breakPlugin('forms@1.1.0');
    const live = [...sim.fleet.environments.values()].find((e) => e.displayName === 'live')!;
    const dir = tempDir();
    const report = join(dir, 'r.json');
    const first = await runCli(['run', writePlaybook(TASKS(sim), dir), '--yes', '--poll-interval', '20', '--report', report], simEnv(sim));
    expect(first.code, first.stderr).toBe(1);
    // The journal as a kill would leave it: the plugin write's operation ended, nothing after it.
    const journal = join(dir, 'r.journal.jsonl');
    const lines = readFileSync(journal, 'utf8').trim().split('\n');
    const cut = lines.findIndex((l) => {
      const r = JSON.parse(l) as Line;
      return r.step === `0:${live.id}` && r.result?.status === 'succeeded';
    });
    expect(cut).toBeGreaterThan(0);
    expect(lines.slice(0, cut).some((l) => (JSON.parse(l) as Line).step === `1:${live.id}`)).toBe(false);
    writeFileSync(journal, `${lines.slice(0, cut + 1).join('\n')}\n`);
    // ...and the environment as it was then: the breaking plugin installed, the theme not yet updated.
    live.plugins.get('forms')!.version = '1.1.0';
    live.themes.get('calm')!.version = '1.0.0';

    const resumed = await runCli(['resume', report, '--yes', '--poll-interval', '20'], simEnv(sim));
    const after = JSON.parse(readFileSync(report, 'utf8')) as Report;
    const [plugin, theme] = [0, 1].map((i) => after.results.find((r) => r.step_id === `${i}:${live.id}`)!);
    expect(resumed.code, JSON.stringify(after.results.map((r) => [r.step_id, r.status, r.reason, r.health]))).toBe(1);
    // No baseline survives the interruption: the site broken now fails the writes, not "broken before".
    expect(plugin!.status, JSON.stringify(plugin)).toBe('failed');
    expect(theme!.status, JSON.stringify(theme)).not.toBe('succeeded');
  });
});
