import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli, simEnv, tempDir, writePlaybook } from '../helpers/cli.js';
import { useSimulator } from '../helpers/sim.js';
import { formatDuration } from '../../src/util/duration.js';

const start = useSimulator();

const playbook = (settings: string) =>
  `version: 1\nname: php\nsettings: { ${settings} }\ntasks:\n  - { name: php, action: php.set_version, target: all, with: { php_version: "8.3" } }\n`;

describe('the duration estimate in plan', () => {
  it('learns operation times from an earlier run (--history) and says so; without it, states the default', async () => {
    const options = { sites: 12, themes: 3, seed: 4, operationDelayMs: [400, 600] as [number, number] };
    const first = await start(options);
    const dir = tempDir();
    const file = writePlaybook(playbook('rate_limit: 20/s, wait: true'), dir);
    const report = join(dir, 'last-night.json');
    expect((await runCli(['run', file, '--yes', '--report', report], simEnv(first.sim))).code).toBe(0);

    const second = await start(options);
    const plain = await runCli(['plan', file], simEnv(second.sim));
    expect(plain.stdout).toMatch(/^estimate: about \d+s from the first write to the last answer, at 20\/s:$/m);
    expect(plain.stdout).toMatch(/^ {2}php: \d+s, \d+ writes, \d+ polls, operations ~30s each \(assumed, no --history REPORT\)$/m);
    const learned = await runCli(['plan', file, '--history', report], simEnv(second.sim));
    const [, ms] = /operations ~(\d+)s each \(learned from (\d+) operations\)/.exec(learned.stdout) ?? [];
    expect(ms).toBeDefined();
    // Learned from operations of 0.4–0.6 s, seen to end by polls (later on a loaded machine): far from the 30 s assumed without it.
    expect(Number(ms)).toBeLessThanOrEqual(10);
    const missing = await runCli(['plan', file, '--history', join(dir, 'nothing.json')], simEnv(second.sim));
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain('--history');
  });

  it('with a window: whether the work fits, and how many steps would be left', async () => {
    const { sim } = await start({ sites: 20, themes: 3, seed: 4 });
    const dir = tempDir();
    const short = await runCli(
      ['plan', writePlaybook(playbook('rate_limit: 30/min, window: { start: "10:00", end: "10:01", timezone: UTC }'), dir, 'a.yaml')],
      simEnv(sim),
    );
    expect(short.stdout).toMatch(/^does not fit settings\.window 10:00–10:01 UTC \(1m00s\): about \d+ of \d+ steps would be left for the next window$/m);
    const long = await runCli(
      ['plan', writePlaybook(playbook('rate_limit: 30/min, window: { start: "10:00", end: "14:00", timezone: UTC }'), dir, 'b.yaml')],
      simEnv(sim),
    );
    expect(long.stdout).toMatch(/^fits settings\.window 10:00–14:00 UTC \(4h00m\)$/m);
  });

  it("a guarded night's restore points in the creating-call lane: the service's documented 5 a minute unless create_rate_limit says otherwise", async () => {
    const { sim } = await start({ sites: 12, themes: 3, seed: 4, profile: 'real' });
    const dir = tempDir();
    const night = (settings: string) =>
      `version: 1\nname: night\nsettings: { ${settings} }\ntasks:\n  - name: themes\n    action: themes.update\n    target: { environment: live }\n` +
      `    with: { skip_vulnerable_updates: false }\n    backup_first: true\n    health: { url: "${sim.siteUrl}", attempts: 1 }\n`;
    const plain = await runCli(['plan', writePlaybook(night('rate_limit: 120/min'), dir, 'a.yaml')], simEnv(sim));
    expect(plain.code).toBe(0);
    expect(plain.stdout).toMatch(
      /^estimate: about \S+ from the first write to the last answer, at 2\/s, creating calls at 5\/min \(the service's documented limit; create_rate_limit sets yours\):$/m,
    );
    // Each restore point takes 12 s of the lane: the estimate is at least that long.
    const [, points, lane] = /(\d+) restore points \(backups ~30s each, assumed, no --history REPORT\), creating-call lane (\S+),/.exec(plain.stdout) ?? [];
    expect(Number(points)).toBeGreaterThan(3);
    expect(lane).toBe(formatDuration(Number(points) * 12));
    expect(plain.stdout).toMatch(
      new RegExp(`^ {2}themes: \\S+, \\d+ writes, ${points} restore points .*, ${points} cache clears, .*clear and look ~30s each`, 'm'),
    );
    const given = await runCli(['plan', writePlaybook(night('rate_limit: 120/min, create_rate_limit: 10/min'), dir, 'b.yaml')], simEnv(sim));
    expect(given.stdout).toMatch(/, creating calls at 10\/min \(create_rate_limit\):$/m);
    expect(given.stdout).toContain(`creating-call lane ${formatDuration(Number(points) * 6)},`);
  });
});
