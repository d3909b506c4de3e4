import { describe, expect, it } from 'vitest';
import { looked, sharedRun, sitesApart, writeAt } from '../helpers/visual-run.js';

// Chromium started and several screenshots a run: seconds each on a loaded machine, where 60 s was too few (as in visual-chromium.test.ts).
describe('health.visual on pages that move by themselves: a slider nobody hides, a carousel', { timeout: 90_000 }, () => {
  describe('pages that break (one run: two sites with a wide slider, one page each)', () => {
    const LOOKS = ['unstyled', 'blank'] as const;
    const breaking = sharedRun({ sites: 8, themes: 4, seed: 3 }, (sim) => {
      const sites = sitesApart(sim, LOOKS.length);
      sites.forEach((at, i) => {
        sim.addSlider(at.domain);
        sim.lookTheme(`${at.theme}@latest`, LOOKS[i]!);
      });
      return sites;
    });

    it.each(LOOKS)(
      'a page unstable before the write (a wide slider nobody hides) that the update leaves %s is broken all the same, and restored',
      async (look) => {
        const { code, write } = writeAt(await breaking(), LOOKS.indexOf(look));
        const page = write.visual!.pages[0]!;
        expect(page).toMatchObject({ unstable: true, verdict: 'broken' });
        expect(page.noise_percent).toBeGreaterThan(1);
        expect(write).toMatchObject({ status: 'failed', visual: { outcome: 'broken' }, restored: { status: 'succeeded' } });
        if (look === 'blank') expect(write.reason).toMatch(/^visual: .* after the write: blank page$/);
        expect(code).toBe(1);
      },
    );
  });

  describe('pages that pass (one run: two sites, one page each; its exit code 0 only when neither made it other)', () => {
    /**
     * hold_over 3%, not the default 1%: the carousel's slide (200×50 px) is 1.9% of a page WINDOW wide
     * (480 px; 0.7% at the default 1280), under it as at 1280; the slider (27.6%: its rows) is over it,
     * and so is the tint's header outside the slider's mask (5.6%).
     */
    const HOLD_OVER = 0.03;
    const passing = sharedRun(
      { sites: 8, themes: 4, seed: 3 },
      (sim) => {
        const [slider, carousel] = sitesApart(sim, 2);
        sim.addSlider(slider!.domain);
        sim.lookTheme(`${slider!.theme}@latest`, 'tint');
        sim.addCarousel(carousel!.domain);
        return [slider!, carousel!];
      },
      looked(`hold_over: "${HOLD_OVER * 100}%"`),
    );

    it('on an unstable page a change over hold_over (not restore_over) is advice: the step passes, the page says what it saw', async () => {
      const { code, write } = writeAt(await passing(), 0);
      expect(write.visual!.pages[0], JSON.stringify(write.visual)).toMatchObject({ unstable: true, verdict: 'changed' });
      expect(write).toMatchObject({ status: 'succeeded', visual: { outcome: 'passed' } });
      expect(code).toBe(0);
    });

    it('a rotating carousel causes no hold: what moves between the two screenshots before is masked', async () => {
      const { code, write } = writeAt(await passing(), 1);
      expect(code).toBe(0);
      const page = write.visual!.pages[0]!;
      expect(write.status).toBe('succeeded');
      // The slides differed before the write (noise), and nothing outside them differs after it.
      expect(page.noise_percent).toBeGreaterThan(0);
      expect(page).toMatchObject({ verdict: 'same', changed_percent: 0 });
      expect(page.unstable).toBeUndefined();
    });
  });
});
