import { describe, expect, it } from 'vitest';
import { useSimulator } from '../helpers/sim.js';
import { oneSite, playbook, run } from '../helpers/visual-run.js';

const start = useSimulator();

// Chromium started and several screenshots a run: seconds each on a loaded machine, where 60 s was too few (as in visual-chromium.test.ts).
describe('health.visual on pages that move by themselves: a slider nobody hides, a carousel', { timeout: 90_000 }, () => {
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
    expect(write.visual!.pages[0], JSON.stringify(write.visual)).toMatchObject({ unstable: true, verdict: 'changed' });
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
