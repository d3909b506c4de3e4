import { spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { Report } from '../../src/report/report.js';
import { runCli, simEnv, tempDir, writePlaybook } from '../helpers/cli.js';
import { useSimulator } from '../helpers/sim.js';

const start = useSimulator();

/** `promtool check metrics` (Debian's prometheus package, installed by scripts/setup-test-deps.mjs): its exit code and what it said. */
function promtool(text: string): { status: number | null; said: string } {
  const result = spawnSync('promtool', ['check', 'metrics'], { input: text, encoding: 'utf8' });
  if (result.error) throw result.error;
  return { status: result.status, said: `${result.stdout}${result.stderr}` };
}

/** The samples of a metrics text, `name{labels}` → value. */
function samples(text: string): Map<string, number> {
  return new Map(
    text
      .split('\n')
      .filter((l) => l && !l.startsWith('#'))
      .map((l) => {
        const at = l.lastIndexOf(' ');
        return [l.slice(0, at), Number(l.slice(at + 1))];
      }),
  );
}

const playbook = (name: string, task: string) =>
  `version: 1\nname: ${JSON.stringify(name)}\ntasks:\n  - { name: ${JSON.stringify(task)}, action: php.set_version, target: all, with: { php_version: "8.3" } }\n`;

describe('--metrics-file', () => {
  it('passes promtool check metrics, its values are the report’s, and two playbooks share one file without clobbering each other', async () => {
    const { sim } = await start({ sites: 6, operationDelayMs: 0, seed: 5 });
    const dir = tempDir();
    const metricsPath = join(dir, 'sitefleet.prom');
    const env = simEnv(sim);
    // A name with every character the format escapes, and a control character a terminal would run.
    const odd = 'odd "name" \\ with\nline \x1b[31m';
    const first = await runCli(
      ['run', writePlaybook(playbook(odd, 'php "8.3"'), dir, 'a.yaml'), '--yes', '--report', join(dir, 'a.json'), '--metrics-file', metricsPath],
      env,
    );
    expect(first.code, first.stderr).toBe(0);
    const afterFirst = readFileSync(metricsPath, 'utf8');
    // The second playbook's operations all fail (another company's fleet): exit 1.
    const failing = simEnv((await start({ sites: 6, operationDelayMs: 0, failOperations: 1 })).sim);
    const nightly = [
      'run',
      writePlaybook(playbook('nightly', 'php'), dir, 'b.yaml'),
      '--yes',
      '--wait',
      '--poll-interval',
      '20',
      '--metrics-file',
      metricsPath,
    ];
    const second = await runCli([...nightly, '--report', join(dir, 'b.json')], failing);
    expect(second.code, second.stderr).toBe(1);
    const text = readFileSync(metricsPath, 'utf8');
    const check = promtool(text);
    expect(check.said).toBe('');
    expect(check.status).toBe(0);

    const report = JSON.parse(readFileSync(join(dir, 'b.json'), 'utf8')) as Report;
    const values = samples(text);
    expect(values.get('sitefleet_last_run_exit_code{playbook="nightly"}')).toBe(1);
    expect(values.get('sitefleet_last_run_timestamp_seconds{playbook="nightly"}')).toBe(Math.round(Date.parse(report.finished_at) / 1000));
    expect(values.get('sitefleet_last_run_duration_seconds{playbook="nightly"}')).toBeCloseTo(
      (Date.parse(report.finished_at) - Date.parse(report.started_at)) / 1000,
      0,
    );
    for (const status of ['succeeded', 'failed', 'unknown', 'skipped', 'accepted'] as const)
      expect(values.get(`sitefleet_steps{playbook="nightly",task="php",status="${status}"}`), status).toBe(report.summary[status]);
    expect(values.get('sitefleet_last_run_rate_limited{playbook="nightly"}')).toBe(0);
    expect(values.get('sitefleet_last_run_restored{playbook="nightly"}')).toBe(0);

    // The first playbook's series are as it left them, its label escaped as the format asks.
    const escaped = 'playbook="odd \\"name\\" \\\\ with\\nline \\\\x1b[31m"';
    const firstLines = afterFirst.split('\n').filter((l) => l.includes(escaped));
    expect(firstLines.length).toBe(11); // 4 run gauges and counters, 6 step statuses, restored
    for (const line of firstLines) expect(text.split('\n')).toContain(line);
    expect(text).not.toContain('\x1b');
    expect(text.match(/^# TYPE sitefleet_steps gauge$/gm)).toHaveLength(1);

    // Run again: its own series are replaced, not repeated.
    const again = await runCli([...nightly, '--report', join(dir, 'c.json')], failing);
    expect(again.code).toBe(1);
    expect(readFileSync(metricsPath, 'utf8').match(/^sitefleet_last_run_exit_code/gm)).toHaveLength(2);
  });

  it('a file that is not sitefleet’s metrics is refused when the run starts, and nothing is sent', async () => {
    const { sim } = await start({ sites: 2, operationDelayMs: 0 });
    const dir = tempDir();
    const other = join(dir, 'node.prom');
    writeFileSync(other, 'node_load1 0.5\n');
    const run = await runCli(['run', writePlaybook(playbook('p', 'php'), dir), '--yes', '--metrics-file', other], simEnv(sim));
    expect(run.code).toBe(2);
    expect(run.stderr).toContain("exists and is not a sitefleet metrics file (Prometheus' text format)");
    expect(sim.log).toHaveLength(0);
    expect(readFileSync(other, 'utf8')).toBe('node_load1 0.5\n');
  });
});
