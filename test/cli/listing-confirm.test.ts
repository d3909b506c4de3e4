import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { Report } from '../../src/report/report.js';
import { HANDLERS } from '../../src/sim/handlers.js';
import type { Simulator } from '../../src/sim/server.js';
import { runCli, simEnv, tempDir, writePlaybook } from '../helpers/cli.js';
import { useSimulator } from '../helpers/sim.js';

const start = useSimulator();
afterEach(() => vi.restoreAllMocks());

async function rollout(sim: Simulator, extra = ''): Promise<{ code: number | null; report: Report }> {
  const dir = tempDir();
  const file = writePlaybook(
    `version: 1\nname: themes\nsettings: { wait: true, rate_limit: 20/s }\ntasks:\n  - { name: themes, action: themes.update, target: all, with: { skip_vulnerable_updates: false }${extra} }\n`,
    dir,
  );
  const reportPath = join(dir, 'r.json');
  const result = await runCli(['run', file, '--yes', '--report', reportPath], simEnv(sim));
  return { code: result.code, report: JSON.parse(readFileSync(reportPath, 'utf8')) as Report };
}

/** What the simulator holds: whether every theme a step updated is now at the catalogue's newest. */
function updatedInSim(sim: Simulator, r: Report['results'][number]): boolean {
  const env = sim.fleet.environments.get(r.target.env_id!)!;
  const themes = (r.request!.body as { themes: { name: string }[] }).themes;
  return themes.every((t) => env.themes.get(t.name)!.version === sim.fleet.catalog.get(t.name)!.versions.at(-1));
}

const count = (sim: Simulator, endpoint: string) => sim.log.filter((e) => e.endpoint === endpoint).length;

describe('theme updates confirmed through the listing', () => {
  it.each(['spec', 'real'] as const)(
    'a waiting rollout (%s profile): most steps confirmed by a few listing reads, the rest polled; every status is the simulator’s',
    async (profile) => {
      const { sim } = await start({ sites: 40, themes: 6, seed: 8, operationDelayMs: [300, 900], profile });
      const { code, report } = await rollout(sim);
      expect(code).toBe(0);
      const steps = report.results.filter((r) => r.step_id !== null);
      expect(steps.length).toBeGreaterThan(30);
      expect(steps.every((r) => r.status === 'succeeded' && updatedInSim(sim, r))).toBe(true);
      const confirmed = steps.filter((r) => r.confirmed_by === 'listing').length;
      expect(confirmed).toBeGreaterThanOrEqual(steps.length - 6);
      // Polls: the probes (and the few the listing did not settle) instead of one or more per operation.
      expect(count(sim, 'getOperation')).toBeLessThan(steps.length / 2);
      const calls = sim.log.filter((e) => e.status !== 429).length;
      expect(calls).toBeLessThanOrEqual(Math.ceil(1.3 * steps.length));
    },
  );

  it('operations that fail are polled and reported failed with the service’s message; none is called succeeded', async () => {
    const { sim } = await start({ sites: 40, themes: 6, seed: 8, operationDelayMs: [300, 900], failOperations: 0.25 });
    const { code, report } = await rollout(sim);
    expect(code).toBe(1);
    const steps = report.results.filter((r) => r.step_id !== null);
    const failed = steps.filter((r) => r.status === 'failed');
    expect(failed.length).toBeGreaterThan(3);
    for (const r of failed) {
      expect(r.reason).toMatch(/^operation failed: wp-themes:bulk-update failed on .+: the service could not complete the change$/);
      expect(r.confirmed_by).toBeUndefined();
      expect(updatedInSim(sim, r)).toBe(false);
    }
    for (const r of steps.filter((s) => s.status === 'succeeded')) expect(updatedInSim(sim, r)).toBe(true);
  });

  it('verify: true reads nothing more for the steps the listing confirmed', async () => {
    // Two themes: every confirming read searches their names (at most three a read), and verify's is the
    // whole listing, as the plan's: the reads are told apart by what they ask, never by comparing two timed runs.
    const { sim } = await start({ sites: 30, themes: 2, seed: 9, operationDelayMs: [300, 600] });
    const listThemes = HANDLERS.listThemes;
    const whole: number[] = [];
    const searched: number[] = [];
    vi.spyOn(HANDLERS, 'listThemes').mockImplementation((ctx) => {
      ((ctx.body as { search?: string } | undefined)?.search === undefined ? whole : searched).push(1);
      return listThemes(ctx);
    });
    const { code, report } = await rollout(sim, ', verify: true');
    expect(code).toBe(0);
    const steps = report.results.filter((r) => r.step_id !== null);
    expect(steps.length).toBeGreaterThan(5);
    const polled = steps.filter((r) => r.confirmed_by === undefined).length;
    expect(polled).toBeLessThan(steps.length);
    expect(searched.length).toBeGreaterThan(0);
    // The plan's one read of the whole listing, and verify's one more only if a step was polled.
    expect(whole.length).toBe(1 + (polled > 0 ? 1 : 0));
    expect(steps.every((r) => r.status === 'succeeded')).toBe(true);
  });
});
