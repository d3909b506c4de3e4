import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll } from 'vitest';
import type { Report, ReportResult } from '../../src/report/report.js';
import { startSimulator, type Simulator, type SimulatorOptions } from '../../src/sim/server.js';
import { runCli, simEnv, tempDir, writePlaybook } from './cli.js';
import { busiestTheme } from './themes.js';

/** A live environment with an update of a theme: its site, theme and domain. */
export interface UpdateAt {
  theme: string;
  site: string;
  domain: string;
  envId: string;
}

/** One live environment with an update of the busiest theme: its site, theme and domain. */
export function oneSite(sim: Simulator): UpdateAt {
  const { theme, envs } = busiestTheme(sim);
  return updateAt(sim, envs[0]!, theme);
}

function updateAt(sim: Simulator, envId: string, theme: string): UpdateAt {
  const env = sim.fleet.environments.get(envId)!;
  return { theme, site: sim.fleet.sites.get(env.siteId)!.displayName, domain: env.domains[0]!.name, envId };
}

/**
 * Live environments of `n` sites, each with an update of a theme of its own that no other of them has
 * at its latest version: a look given to one theme's latest shows on its own site only, after its write.
 */
export function sitesApart(sim: Simulator, n: number): UpdateAt[] {
  const latest = (envId: string, theme: string) =>
    sim.fleet.environments.get(envId)!.themes.get(theme)?.version === sim.fleet.catalog.get(theme)!.versions.at(-1);
  const picked: (UpdateAt & { siteId: string })[] = [];
  for (const env of sim.fleet.environments.values()) {
    if (env.displayName !== 'live' || picked.some((p) => p.siteId === env.siteId)) continue;
    const theme = [...env.themes.keys()].find(
      (name) => !latest(env.id, name) && picked.every((p) => p.theme !== name && !latest(env.id, p.theme) && !latest(p.envId, name)),
    );
    if (theme) picked.push({ ...updateAt(sim, env.id, theme), siteId: env.siteId });
    if (picked.length === n) return picked.map(({ siteId: _, ...at }) => at);
  }
  throw new Error(`no ${n} sites apart in this fleet`);
}

/**
 * The window the pages are shot in: narrow, as what a run's own process spends (decoding, comparing and
 * encoding the screenshots) grows with their pixels, and the simulator's page is 1088 px tall at any
 * width (its parts have fixed heights: sim/site-look.ts), so a share of its rows (a slider, a header, a
 * bar) is what it is at the default 1280. A part of fixed size (the carousel's slide) is a bigger share.
 */
export const WINDOW = { width: 480, height: 320 };

/** health.visual in WINDOW, with `more` of its fields (`hold_over: "3%"`); the gap between screenshots tiny: the carousel moves per load, not per second. */
export function looked(more = ''): string {
  return `{ gap: 10ms, viewport: { width: ${WINDOW.width}, height: ${WINDOW.height} }${more ? `, ${more}` : ''} }`;
}

/** A guarded theme update of each site (a task each), with the pages looked at (`visual`). */
export function playbook(sim: Simulator, at: UpdateAt | UpdateAt[], visual = looked()): string {
  const tasks = [at].flat().map(
    (a) => `  - name: update ${a.theme}
    action: themes.update
    target: { site: "${a.site}", environment: live, theme: ${a.theme} }
    with: { themes: ${a.theme}, skip_vulnerable_updates: false }
    backup_first: true
    health: { url: "${sim.siteUrl}", attempts: 1, on_broken: restore, visual: ${visual} }
`,
  );
  return writePlaybook(`version: 1
name: visual
settings: { visual_sandbox: false } # root here: see visual-chromium.test.ts
tasks:
${tasks.join('')}`);
}

export async function run(
  sim: Simulator,
  file: string,
): Promise<{ code: number | null; out: string; report: Report; reportPath: string; write: ReportResult; writes: ReportResult[] }> {
  const reportPath = join(tempDir(), 'night.json');
  const html = join(tempDir(), 'page.html');
  const result = await runCli(['run', file, '--yes', '--poll-interval', '50', '--report', reportPath, '--html', html], simEnv(sim));
  const report = JSON.parse(readFileSync(reportPath, 'utf8')) as Report;
  const writes = report.results.filter((r) => r.role !== 'backup' && r.step_id !== null);
  return { code: result.code, out: result.stdout + result.stderr + readFileSync(html, 'utf8'), report, reportPath, write: writes[0]!, writes };
}

type VisualRun = Awaited<ReturnType<typeof run>> & { sim: Simulator; at: UpdateAt[] };

/**
 * What `make` does on a simulator of its own (useSimulator's timings), done by the first test that asks
 * and shared by the describe's (or file's) tests that read it from different sides: a browser started
 * and its pages shot once, not per test. The simulator stops after them all.
 */
export function shared<T>(options: SimulatorOptions, make: (sim: Simulator) => Promise<T>): () => Promise<T & { sim: Simulator }> {
  let made: Promise<T & { sim: Simulator }> | undefined;
  let sim: Simulator | undefined;
  afterAll(async () => {
    await sim?.stop();
  });
  return () =>
    (made ??= (async () => {
      const profile = process.env.SITEFLEET_TEST_PROFILE === 'real' ? { profile: 'real' as const } : {};
      sim = await startSimulator({ operationDelayMs: 50, clearCacheGapMs: 250, ...profile, ...options });
      return { ...(await make(sim)), sim };
    })());
}

/** One run of `playbook` (its pages looked at as `visual` says) on the sites `prepare` picks (and gives their looks), shared as `shared` says. */
export function sharedRun(options: SimulatorOptions, prepare: (sim: Simulator) => UpdateAt[], visual = looked()): () => Promise<VisualRun> {
  return shared(options, async (sim) => {
    const at = prepare(sim);
    return { ...(await run(sim, playbook(sim, at, visual))), at };
  });
}

/** The write of the run's `nth` site (as `prepare` gave them), and the run's exit code. */
export function writeAt(made: VisualRun, nth: number): { code: number | null; write: ReportResult } {
  const write = made.writes.find((w) => w.target.site === made.at[nth]!.site);
  if (!write) throw new Error(`no write of ${made.at[nth]!.site} in the report`);
  return { code: made.code, write };
}
