import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { Report, ReportResult } from '../../src/report/report.js';
import type { Simulator } from '../../src/sim/server.js';
import { decodePng } from '../../src/health/visual-image.js';
import { runCli, simEnv, tempDir, writePlaybook } from '../helpers/cli.js';
import { useSimulator } from '../helpers/sim.js';
import { busiestTheme } from '../helpers/themes.js';

const start = useSimulator();

/** One live environment with an update of the busiest theme: its site, theme and domain. */
function oneSite(sim: Simulator): { theme: string; site: string; domain: string; envId: string } {
  const { theme, envs } = busiestTheme(sim);
  const env = sim.fleet.environments.get(envs[0]!)!;
  return { theme, site: sim.fleet.sites.get(env.siteId)!.displayName, domain: env.domains[0]!.name, envId: env.id };
}

/** A guarded theme update of one site, with the pages looked at (the gap between screenshots tiny: the carousel moves per load, not per second). */
function playbook(sim: Simulator, at: ReturnType<typeof oneSite>, visual = '{ gap: 10ms }'): string {
  return writePlaybook(`version: 1
name: visual
settings: { visual_sandbox: false } # root here: see visual-chromium.test.ts
tasks:
  - name: update ${at.theme}
    action: themes.update
    target: { site: "${at.site}", environment: live, theme: ${at.theme} }
    with: { themes: ${at.theme}, skip_vulnerable_updates: false }
    backup_first: true
    health: { url: "${sim.siteUrl}", attempts: 1, on_broken: restore, visual: ${visual} }
`);
}

async function run(sim: Simulator, file: string): Promise<{ code: number | null; out: string; report: Report; reportPath: string; write: ReportResult }> {
  const reportPath = join(tempDir(), 'night.json');
  const html = join(tempDir(), 'page.html');
  const result = await runCli(['run', file, '--yes', '--poll-interval', '50', '--report', reportPath, '--html', html], simEnv(sim));
  const report = JSON.parse(readFileSync(reportPath, 'utf8')) as Report;
  const write = report.results.find((r) => r.role !== 'backup' && r.step_id !== null)!;
  return { code: result.code, out: result.stdout + result.stderr + readFileSync(html, 'utf8'), report, reportPath, write };
}

describe('health.visual: the pages before and after a theme update, in the machine’s Chromium', () => {
  it('a page that does not change passes: two screenshots before, one after, nothing kept', async () => {
    const { sim } = await start({ sites: 8, themes: 4, seed: 3 });
    const at = oneSite(sim);
    const { code, write, reportPath } = await run(sim, playbook(sim, at));
    expect(code).toBe(0);
    expect(write).toMatchObject({ status: 'succeeded', visual: { outcome: 'passed', pages: [{ verdict: 'same', changed_percent: 0 }] } });
    expect(sim.siteLog.filter((e) => e.domain === at.domain)).toHaveLength(2 + 3); // the HTTP checks, then the screenshots
    expect(existsSync(`${reportPath}.visual`)).toBe(false);
  });

  it('a small change (a notice bar that moves the page down) is held with a diff image, counted as a problem, not a failure', async () => {
    const { sim } = await start({ sites: 8, themes: 4, seed: 3 });
    const at = oneSite(sim);
    sim.lookTheme(`${at.theme}@latest`, 'notice');
    const { code, write, reportPath, out } = await run(sim, playbook(sim, at));
    expect(code).toBe(1);
    expect(write.status).toBe('held');
    const page = write.visual!.pages[0]!;
    // The bar is 48 of some 1100 rows: with the shift forgiven, only its rows count.
    expect(page.verdict).toBe('changed');
    expect(page.changed_percent).toBeGreaterThan(1);
    expect(page.changed_percent).toBeLessThan(10);
    expect(write.held).toMatchObject({ code: 'visual_difference', changed_percent: page.changed_percent, diff: page.images!.diff });
    expect(write.held!.override).toContain('health.visual.hold_over');
    expect(write.reason).toMatch(
      /^visual_difference: [\d.]+% of the page changed at http:\/\/127\.0\.0\.1:\d+\/sites\/.+ \(diff night\.json\.visual\/.+-diff\.png\)$/,
    );
    const diff = decodePng(readFileSync(join(dirname(reportPath), page.images!.diff)));
    expect(diff.width).toBe(1280);
    for (const kind of ['before', 'after', 'mask'] as const) expect(existsSync(join(dirname(reportPath), page.images![kind]))).toBe(true);
    // The update stays; no restore was sent.
    expect(sim.log.filter((e) => e.endpoint === 'restoreBackup')).toHaveLength(0);
    expect(out).toContain('0 failed, 1 held');
    expect(out).toContain('Pages that look different (1)');
  });

  it('a layout that breaks is restored (on_broken: restore)', async () => {
    const { sim } = await start({ sites: 8, themes: 4, seed: 3 });
    const at = oneSite(sim);
    sim.lookTheme(`${at.theme}@latest`, 'unstyled');
    const { code, write } = await run(sim, playbook(sim, at));
    expect(code).toBe(1);
    expect(write).toMatchObject({ status: 'failed', health: { outcome: 'healthy' }, visual: { outcome: 'broken' }, restored: { status: 'succeeded' } });
    expect(write.reason).toMatch(/^visual: /);
    expect(sim.log.filter((e) => e.endpoint === 'restoreBackup')).toHaveLength(1);
    const version = sim.fleet.environments.get(at.envId)!.themes.get(at.theme)!.version;
    expect(version).not.toBe(sim.fleet.catalog.get(at.theme)!.versions.at(-1));
  });

  it('a theme that strips the page’s styles changes at most all of it (not 117%), and status reads the run’s own report back', async () => {
    const { sim } = await start({ sites: 8, themes: 4, seed: 3 });
    const at = oneSite(sim);
    sim.lookTheme(`${at.theme}@latest`, 'unstyled');
    const { write, reportPath } = await run(sim, playbook(sim, at));
    const page = write.visual!.pages[0]!;
    expect(page.verdict).toBe('broken');
    expect(page.changed_percent).toBeGreaterThan(25);
    expect(page.changed_percent).toBeLessThanOrEqual(100);
    const status = await runCli(['status', reportPath], simEnv(sim));
    expect(status.stderr).not.toMatch(/report|schema|changed_percent/i);
    expect(status.code).toBe(1);
  });

  // One run a test (two in one outlasted the test timeout on a loaded machine).
  it.each(['unstyled', 'blank'] as const)(
    'a page unstable before the write (a wide slider nobody hides) that the update leaves %s is broken all the same, and restored',
    async (look) => {
      const { sim } = await start({ sites: 8, themes: 4, seed: 3 });
      const at = oneSite(sim);
      sim.addSlider(at.domain);
      sim.lookTheme(`${at.theme}@latest`, look);
      const { code, write } = await run(sim, playbook(sim, at));
      const page = write.visual!.pages[0]!;
      expect(page).toMatchObject({ unstable: true, verdict: 'broken' });
      expect(page.noise_percent).toBeGreaterThan(1);
      expect(write).toMatchObject({ status: 'failed', visual: { outcome: 'broken' }, restored: { status: 'succeeded' } });
      if (look === 'blank') expect(write.reason).toMatch(/^visual: .* after the write: blank page$/);
      expect(code).toBe(1);
    },
  );

  it('on an unstable page a change over hold_over (not restore_over) is advice: the step passes, the page says what it saw', async () => {
    const { sim } = await start({ sites: 8, themes: 4, seed: 3 });
    const at = oneSite(sim);
    sim.addSlider(at.domain);
    sim.lookTheme(`${at.theme}@latest`, 'tint');
    const { code, write } = await run(sim, playbook(sim, at));
    expect(write.visual!.pages[0]).toMatchObject({ unstable: true, verdict: 'changed' });
    expect(write).toMatchObject({ status: 'succeeded', visual: { outcome: 'passed' } });
    expect(code).toBe(0);
  });

  it('a rotating carousel causes no hold: what moves between the two screenshots before is masked', async () => {
    const { sim } = await start({ sites: 8, themes: 4, seed: 3 });
    const at = oneSite(sim);
    sim.addCarousel(at.domain);
    const { code, write } = await run(sim, playbook(sim, at));
    expect(code).toBe(0);
    const page = write.visual!.pages[0]!;
    expect(write.status).toBe('succeeded');
    // The slides differed before the write (noise), and nothing outside them differs after it.
    expect(page.noise_percent).toBeGreaterThan(0);
    expect(page).toMatchObject({ verdict: 'same', changed_percent: 0 });
    expect(page.unstable).toBeUndefined();
  });
});
