import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { StagingDecision } from '../../src/plan/staging-first.js';
import type { Report } from '../../src/report/report.js';
import type { Simulator } from '../../src/sim/server.js';
import { runCli, tempDir, writePlaybook } from './cli.js';
import { installed } from './themes.js';

/** Nights of a fleet's life, given to the CLI as its clock: no test waits for the soak to pass. */
export const T0 = Date.parse('2026-03-02T02:00:00.000Z');
export const HOUR = 3_600_000;
export const iso = (at: number) => new Date(at).toISOString();
/** The simulator's operations end in 50 ms: polled every 20 ms, not after the CLI's 1 s first wait. */
export const POLL = ['--poll-interval', '20'];

export function playbook(sim: Simulator, rollout = '{ staging_first: true, soak: 20h }', withBlock = '{}'): string {
  return writePlaybook(
    `version: 1
name: staged
settings: { rate_limit: 50/s }
tasks:
  - name: themes
    action: themes.update
    target: { environment: live }
    allow_empty: true
    backup_first: true
    with: ${withBlock}
    health: { url: "${sim.siteUrl}", attempts: 2, interval: 50ms, on_broken: restore }
    rollout: ${rollout}
`,
  );
}

/** The same task with on_broken: leave (a broken staging keeps the version), and no restore points. */
export function playbookLeaving(sim: Simulator, rollout: string): string {
  return writePlaybook(
    `version: 1\nname: staged\nsettings: { rate_limit: 50/s }\ntasks:\n  - name: themes\n    action: themes.update\n    target: { environment: live }\n    health: { url: "${sim.siteUrl}", attempts: 2, interval: 50ms }\n    rollout: ${rollout}\n`,
  );
}

/** Whether two environments are of one site. */
export function sameSite(sim: Simulator, a: string, b: string): boolean {
  return sim.fleet.environments.get(a)!.siteId === sim.fleet.environments.get(b)!.siteId;
}

/** One night's run at `at`: what it changed on the simulator, by environment name, and its report. */
export async function night(
  sim: Simulator,
  env: Record<string, string>,
  at: number,
  flags: string[] = [],
  rollout?: string,
  runFlags: string[] = [],
  withBlock?: string,
) {
  const reportPath = join(tempDir(), 'r.json');
  const before = installed(sim);
  const result = await runCli([...flags, 'run', playbook(sim, rollout, withBlock), '--yes', '--report', reportPath, ...POLL, ...runFlags], env, {
    now: () => at,
  });
  const after = installed(sim);
  const names = new Map([...sim.fleet.environments.values()].map((e) => [e.id, e.displayName]));
  const moved = [...before].filter(([key, v]) => after.get(key) !== v).map(([key]) => names.get(key.split(' ')[0]!)!);
  return { ...result, moved, report: JSON.parse(readFileSync(reportPath, 'utf8')) as Report };
}

export const decisionsOf = (report: Report): StagingDecision[] => report.results.flatMap((r) => r.staging ?? []);
export const codes = (report: Report) => [...new Set(decisionsOf(report).map((d) => d.code))].sort();

/** Sites with a staging environment, and those without (the first site's staging renamed away, so there is one). */
export function sitesOf(sim: Simulator): { staged: number; alone: number } {
  const first = [...sim.fleet.sites.values()].find((s) => s.envIds.some((id) => sim.fleet.environments.get(id)!.displayName === 'staging'))!;
  sim.rename('environment', `${first.displayName}/staging`, 'preview');
  const sites = [...sim.fleet.sites.values()].map((s) => s.envIds.map((id) => sim.fleet.environments.get(id)!.displayName));
  return { staged: sites.filter((n) => n.includes('staging')).length, alone: sites.filter((n) => !n.includes('staging')).length };
}
