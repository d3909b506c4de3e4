import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { decodePng } from '../../src/health/visual/image.js';
import { runCli, simEnv } from '../helpers/cli.js';
import { useSimulator } from '../helpers/sim.js';
import { oneSite, playbook, run, sharedRun, WINDOW } from '../helpers/visual-run.js';

const start = useSimulator();

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
    expect(diff.width).toBe(WINDOW.width);
    for (const kind of ['before', 'after', 'mask'] as const) expect(existsSync(join(dirname(reportPath), page.images![kind]))).toBe(true);
    // The update stays; no restore was sent.
    expect(sim.log.filter((e) => e.endpoint === 'restoreBackup')).toHaveLength(0);
    expect(out).toContain('0 failed, 1 held');
    expect(out).toContain('Pages that look different (1)');
  });

  describe('a theme that strips the page’s styles (one run, looked at from two sides)', () => {
    const unstyled = sharedRun({ sites: 8, themes: 4, seed: 3 }, (sim) => {
      const at = oneSite(sim);
      sim.lookTheme(`${at.theme}@latest`, 'unstyled');
      return [at];
    });

    it('a layout that breaks is restored (on_broken: restore)', async () => {
      const { sim, at, code, write } = await unstyled();
      const { envId, theme } = at[0]!;
      expect(code).toBe(1);
      expect(write).toMatchObject({ status: 'failed', health: { outcome: 'healthy' }, visual: { outcome: 'broken' }, restored: { status: 'succeeded' } });
      expect(write.reason).toMatch(/^visual: /);
      expect(sim.log.filter((e) => e.endpoint === 'restoreBackup')).toHaveLength(1);
      const version = sim.fleet.environments.get(envId)!.themes.get(theme)!.version;
      expect(version).not.toBe(sim.fleet.catalog.get(theme)!.versions.at(-1));
    });

    it('it changes at most all of the page (not 117%), and status reads the run’s own report back', async () => {
      const { sim, write, reportPath } = await unstyled();
      const page = write.visual!.pages[0]!;
      expect(page.verdict).toBe('broken');
      expect(page.changed_percent).toBeGreaterThan(25);
      expect(page.changed_percent).toBeLessThanOrEqual(100);
      const status = await runCli(['status', reportPath], simEnv(sim));
      expect(status.stderr).not.toMatch(/report|schema|changed_percent/i);
      expect(status.code).toBe(1);
    });
  });
});
