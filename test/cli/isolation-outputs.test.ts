import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli, simEnv, tempDir, writePlaybook } from '../helpers/cli.js';
import { useSimulator } from '../helpers/sim.js';
import { fourPlugins, isolatingNight } from '../helpers/isolate.js';

const start = useSimulator();

describe('an isolated site in the outputs, from the CLI against the simulator', () => {
  it('the terminal summary, the run page and the monthly record name the culprit, the version kept, the updates kept and the restores', async () => {
    const { sim } = await start({ sites: 1, seed: 5, operationDelayMs: 20, clearCacheGapMs: 0, pageCacheTtlMs: 0 });
    const { live } = fourPlugins(sim);
    const site = sim.fleet.sites.get(live.siteId)!.displayName;
    const dir = tempDir();
    const reportPath = join(dir, 'r.json');
    const playbook = writePlaybook(isolatingNight(sim), dir);
    const run = await runCli(['run', playbook, '--yes', '--poll-interval', '20', '--report', reportPath], simEnv(sim));
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
    // What changed (issue 56): the updates kept are listed as done, the culprit only as the version the site stays on.
    const work = section.slice(section.indexOf('<h4>Plugin updates</h4>'), section.indexOf('Isolated updates'));
    expect(work).toContain('p1 1.0.0 → 1.1.0, p2 1.0.0 → 1.1.0, p3 1.0.0 → 1.1.0');
    expect(work).not.toContain('p0');
    expect(out).toContain('updated: p1 1.0.0 → 1.1.0 on 1 site');
    expect(out).not.toContain('updated: p0');
  });
});
