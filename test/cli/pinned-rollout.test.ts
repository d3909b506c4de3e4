import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { Plan } from '../../src/plan/plan.js';
import type { Report } from '../../src/report/report.js';
import { runCli, simEnv, tempDir } from '../helpers/cli.js';
import { useSimulator } from '../helpers/sim.js';
import { installed, shapeFleet } from '../helpers/themes.js';

const start = useSimulator();

describe('pinned updates in a rollout', () => {
  it('a rollout shares out environments, not calls: every pinned write of an environment and its restore point go in one wave', async () => {
    const { sim } = await start({ sites: 6, seed: 5 });
    const patch = { versions: ['1.0.0', '1.0.1'], vulnerable: [] };
    shapeFleet(sim, { a: patch, b: patch, c: patch });
    const file = join(tempDir(), 'p.yaml');
    writeFileSync(
      file,
      `version: 1
name: pinned rollout
tasks:
  - name: themes
    action: themes.update
    target: { environment: live }
    with: { max_bump: minor }
    backup_first: true
    rollout: { canary: 1, waves: ["50%", "100%"] }
`,
    );
    const dir = tempDir();
    expect((await runCli(['plan', file, '--out', join(dir, 'plan.json')], simEnv(sim))).code).toBe(0);
    const plan = JSON.parse(readFileSync(join(dir, 'plan.json'), 'utf8')) as Plan;
    const wavesOf = new Map<string, Set<number>>();
    for (const s of plan.steps) wavesOf.set(s.target.env_id!, (wavesOf.get(s.target.env_id!) ?? new Set()).add(s.wave!));
    expect(wavesOf.size).toBe(6);
    for (const waves of wavesOf.values()) expect(waves.size).toBe(1);
    // The canary is one environment: its restore point and its three themes.
    expect(plan.steps.filter((s) => s.wave === 0)).toHaveLength(4);

    const path = join(dir, 'r.json');
    // The service's default limits (2/s, backups 5 a minute) would spend 20 s on what the waves are not about.
    const res = await runCli(['--rate', '50/s', '--create-rate', '50/s', 'run', file, '--yes', '--poll-interval', '50', '--report', path], simEnv(sim));
    expect(res.code).toBe(0);
    const report = JSON.parse(readFileSync(path, 'utf8')) as Report;
    expect(report.results.filter((r) => r.status !== 'succeeded')).toEqual([]);
    const live = [...sim.fleet.environments.values()].filter((e) => e.displayName === 'live').map((e) => e.id);
    for (const [key, version] of installed(sim)) if (live.includes(key.split(' ')[0]!)) expect(version).toBe('1.0.1');
  });
});
