import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { Plan } from '../../src/plan/plan.js';
import { runCli, simEnv, tempDir, writePlaybook } from '../helpers/cli.js';
import { useSimulator } from '../helpers/sim.js';

const start = useSimulator();

/** A valid playbook with one duration set: `settings` and `task` are YAML lines under each. */
function playbook({ settings = '', task = '' }: { settings?: string; task?: string }): string {
  return `version: 1
name: durations
settings:
  wait: true
${settings}tasks:
  - name: php
    action: php.set_version
    target: { environment: live }
    with: { php_version: "8.3" }
${task}`;
}

/** Each duration of the playbook: its field, where it goes, its line and column there, the longest it takes. */
const FIELDS = [
  { field: 'settings.not_found_grace', max: '1h', at: (v: string) => ({ settings: `  not_found_grace: ${v}\n` }), line: 5, column: 20 },
  { field: 'settings.wait_timeout', max: '24h', at: (v: string) => ({ settings: `  wait_timeout: ${v}\n` }), line: 5, column: 17 },
  { field: 'tasks.0.timeout', max: '24h', at: (v: string) => ({ task: `    timeout: ${v}\n` }), line: 10, column: 14 },
  { field: 'tasks.0.rollout.pause', max: '168h', at: (v: string) => ({ task: `    rollout: { canary: 1, pause: ${v} }\n` }), line: 10, column: 34 },
  { field: 'tasks.0.health.timeout', max: '10m', at: (v: string) => ({ task: `    health: { timeout: ${v} }\n` }), line: 10, column: 24 },
  { field: 'tasks.0.health.interval', max: '1h', at: (v: string) => ({ task: `    health: { interval: ${v} }\n` }), line: 10, column: 25 },
];

describe('every duration of a playbook has a longest value that a timer holds', () => {
  it.each(FIELDS)('$field: $max is valid', async ({ max, at }) => {
    const file = writePlaybook(playbook(at(max)));
    const result = await runCli(['validate', file]);
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
  });

  it.each(FIELDS.flatMap((f) => [`${f.max}1ms`, '1000h'].map((value) => ({ ...f, value }))))(
    '$field: $value is exit 2, one line at file:line:col naming the field',
    async ({ field, max, at, value, line, column }) => {
      const file = writePlaybook(playbook(at(value)));
      const result = await runCli(['validate', file]);
      expect(result.code).toBe(2);
      expect(result.stderr.trim().split('\n')).toEqual([
        `${file}:${line}:${column}: ${field}: "${value}" is longer than ${max}, the most it takes`,
        '1 problem; nothing was sent',
      ]);
    },
  );

  it('a value that is no duration says what one looks like', async () => {
    const file = writePlaybook(playbook({ task: '    rollout: { canary: 1, pause: 3 days }\n' }));
    const result = await runCli(['validate', file]);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain(`${file}:10:34: tasks.0.rollout.pause: "3 days" is not a duration such as 500ms, 30s, 5m or 1h30m\n`);
  });

  it.each(['plan', 'run'])('%s with health.timeout: 1000h exits 2 before anything is sent (no lock, no journal, no request)', async (command) => {
    const { sim } = await start();
    const dir = tempDir();
    const file = writePlaybook(playbook({ task: `    health: { url: "${sim.siteUrl}", timeout: 1000h }\n` }), dir);
    const report = join(dir, 'r.json');
    const env = simEnv(sim);
    const result = await runCli(command === 'run' ? ['run', file, '--yes', '--report', report] : ['plan', file], env);
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(new RegExp(`^${file}:10:\\d+: tasks\\.0\\.health\\.timeout: "1000h" is longer than 10m, the most it takes$`, 'm'));
    expect(sim.log).toEqual([]);
    expect(sim.siteLog).toEqual([]);
    expect(existsSync(report) || existsSync(`${report.slice(0, -5)}.journal.jsonl`)).toBe(false);
    expect(existsSync(join(env.SITEFLEET_STATE_DIR!, 'locks'))).toBe(false);
  });

  it('a saved plan edited to wait longer than a timer holds is refused (exit 2 at its line), nothing sent', async () => {
    const { sim } = await start();
    const dir = tempDir();
    const file = writePlaybook(playbook({ task: '    timeout: 24h\n' }), dir);
    const planFile = join(dir, 'plan.json');
    expect((await runCli(['plan', file, '--out', planFile], simEnv(sim))).code).toBe(0);
    const plan = JSON.parse(readFileSync(planFile, 'utf8')) as Plan;
    plan.tasks[0]!.timeout_ms = 1200 * 3_600_000;
    writeFileSync(planFile, JSON.stringify(plan, null, 2));
    const before = sim.log.length;
    const result = await runCli(['run', '--plan', planFile, '--yes'], simEnv(sim));
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(
      new RegExp(`^${planFile}:\\d+:\\d+: tasks\\.0\\.timeout_ms: must be <= 2147483647( \\(not a plan sitefleet wrote\\))?$`, 'm'),
    );
    expect(sim.log.slice(before)).toEqual([]);
  });
});

/** Each duration flag: the command line around it, the longest it takes, and its form for the message. */
const FLAGS = [
  { flag: '--rate-limit-wait', max: '24h', args: (v: string) => ['--rate-limit-wait', v, 'validate', writePlaybook(playbook({}))] },
  { flag: '--max-plan-age', max: '24d', args: (v: string) => ['run', '--plan', join(tempDir(), 'none.json'), '--max-plan-age', v] },
  { flag: '--wait', max: '24h', args: (v: string) => ['status', join(tempDir(), 'none.json'), '--wait', v] },
  { flag: '--max-age', max: '366d', args: (v: string) => ['backups', '--max-age', v] },
  { flag: '--expiry-warning', max: '366d', args: (v: string) => ['doctor', '--expiry-warning', v] },
];

describe('every duration flag has a longest value', () => {
  it.each(FLAGS)('$flag $max is taken', async ({ flag, max, args }) => {
    const result = await runCli(args(max), { SITEFLEET_STATE_DIR: tempDir() });
    expect(result.stderr).not.toContain(flag);
  });

  it.each(FLAGS.map((f) => ({ ...f, value: `${f.max}1ms` })))('$flag $value is exit 2, one line naming the flag', async ({ flag, max, args, value }) => {
    const result = await runCli(args(value), { SITEFLEET_STATE_DIR: tempDir() });
    expect(result.code).toBe(2);
    expect(result.stderr).toBe(`sitefleet: ${flag} "${value}" is longer than ${max}, the most it takes\n`);
  });

  it('the lease of --coordination: 10m is taken, more is exit 2 before Redis is reached', async () => {
    const env = { SITEFLEET_STATE_DIR: tempDir(), SITEFLEET_COMPANY: '0f1e2d3c-4b5a-4697-8877-665544332211' };
    // Port 9 on this machine answers nothing: a lease that passes gets as far as trying to connect.
    const taken = await runCli(['inventory', '--coordination', 'redis://127.0.0.1:9/0?lease=10m'], env);
    expect(taken.stderr).toContain('cannot reach Redis at redis://127.0.0.1:9/0');
    const refused = await runCli(['inventory', '--coordination', 'redis://127.0.0.1:9/0?lease=10m1ms'], env);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toBe('sitefleet: --coordination: lease="10m1ms" is longer than 10m, the most it takes\n');
  });

  it.each(['--latency', '--site-latency', '--op-delay'])('sim %s past what a timer holds is exit 2 naming the flag', async (flag) => {
    const result = await runCli(['sim', flag, '1-2147483648']);
    expect(result.code).toBe(2);
    expect(result.stderr.split('\n')[0]).toContain(`${flag}: 2147483648 ms is longer than a timer holds (2147483647)`);
  });
});
