import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Report, ReportResult } from '../../src/report/report.js';
import { afterAll } from 'vitest';
import { startSimulator, type Simulator, type SimulatorOptions } from '../../src/sim/server.js';
import { runCli, simEnv, tempDir, writePlaybook } from './cli.js';
import { busiestTheme } from './themes.js';

/** One live environment with an update of the busiest theme: its site, theme and domain. */
export function oneSite(sim: Simulator): { theme: string; site: string; domain: string; envId: string } {
  const { theme, envs } = busiestTheme(sim);
  const env = sim.fleet.environments.get(envs[0]!)!;
  return { theme, site: sim.fleet.sites.get(env.siteId)!.displayName, domain: env.domains[0]!.name, envId: env.id };
}

/** A guarded theme update of one site, with the pages looked at (the gap between screenshots tiny: the carousel moves per load, not per second). */
export function playbook(sim: Simulator, at: ReturnType<typeof oneSite>, visual = '{ gap: 10ms }'): string {
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

export async function run(
  sim: Simulator,
  file: string,
): Promise<{ code: number | null; out: string; report: Report; reportPath: string; write: ReportResult }> {
  const reportPath = join(tempDir(), 'night.json');
  const html = join(tempDir(), 'page.html');
  const result = await runCli(['run', file, '--yes', '--poll-interval', '50', '--report', reportPath, '--html', html], simEnv(sim));
  const report = JSON.parse(readFileSync(reportPath, 'utf8')) as Report;
  const write = report.results.find((r) => r.role !== 'backup' && r.step_id !== null)!;
  return { code: result.code, out: result.stdout + result.stderr + readFileSync(html, 'utf8'), report, reportPath, write };
}

type VisualRun = Awaited<ReturnType<typeof run>> & { sim: Simulator; at: ReturnType<typeof oneSite> };

/**
 * One run of `playbook` on a fleet `look` shapes, made by the first test that asks and shared by the
 * describe's tests that read it from different sides: a browser started and its pages shot once, not
 * per test. Its simulator (useSimulator's timings) stops after them all.
 */
export function sharedRun(options: SimulatorOptions, look: (sim: Simulator, at: ReturnType<typeof oneSite>) => void): () => Promise<VisualRun> {
  let made: Promise<VisualRun> | undefined;
  let sim: Simulator | undefined;
  afterAll(async () => {
    await sim?.stop();
  });
  return () =>
    (made ??= (async () => {
      const profile = process.env.SITEFLEET_TEST_PROFILE === 'real' ? { profile: 'real' as const } : {};
      sim = await startSimulator({ operationDelayMs: 50, clearCacheGapMs: 250, ...profile, ...options });
      const at = oneSite(sim);
      look(sim, at);
      return { ...(await run(sim, playbook(sim, at))), sim, at };
    })());
}
