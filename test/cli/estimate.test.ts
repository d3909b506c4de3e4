import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli, simEnv, tempDir, writePlaybook } from '../helpers/cli.js';
import { useSimulator } from '../helpers/sim.js';

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
    expect(Number(ms)).toBeLessThanOrEqual(2);
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
});
