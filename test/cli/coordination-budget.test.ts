import { readFileSync, renameSync } from 'node:fs';
import { journalPathFor } from '../../src/run/journal.js';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { Report } from '../../src/report/report.js';
import { BLOCKED_MESSAGE } from '../../src/sim/operations.js';
import type { Simulator } from '../../src/sim/server.js';
import { runCli, simEnv, startCli, tempDir, writePlaybook } from '../helpers/cli.js';
import { useRedis } from '../helpers/redis.js';
import { busiestWindow, useSimulator, waitFor } from '../helpers/sim.js';

// Real redis-server processes and real CLI processes: no Redis mocks behind these claims.
const start = useSimulator();
const redis = useRedis();

/** A playbook of one backup per environment, under its own name. */
function backups(name: string, settings = 'lock: playbook', wait = false): string {
  return `version: 1\nname: ${name}\nsettings: { ${settings} }\ntasks:\n  - { name: b, action: backups.create, target: all, wait: ${wait}, with: { tag: "${name}-{{env}}" } }\n`;
}

const readReport = (path: string) => JSON.parse(readFileSync(path, 'utf8')) as Report;
const blockedOps = (sim: Simulator) => [...sim.operations.all.values()].filter((op) => op.message === BLOCKED_MESSAGE).length;

describe('--coordination: one rate budget and one set of busy environments per company', () => {
  it('three playbooks on the same environments together: never more than R in a window, no 429, nothing blocked', async () => {
    // 10 per 250 ms: the shape of 120/min, 12 times faster; operations long enough that a backup sent to an
    // environment still busy with another run's would find it blocked.
    const { sim } = await start({ sites: 4, rate: '10/250ms', operationDelayMs: [150, 450] });
    const r = await redis();
    const dir = tempDir();
    const names = ['one', 'two', 'three'];
    const results = await Promise.all(
      names.map((name) =>
        runCli(
          [
            '--coordination',
            r.url,
            '--rate',
            '10/250ms',
            'run',
            writePlaybook(backups(name, 'lock: playbook', true), dir, `${name}.yaml`),
            '--yes',
            '--poll-interval',
            '100',
            '--report',
            join(dir, `${name}.json`),
          ],
          simEnv(sim),
        ),
      ),
    );
    for (const res of results) expect(res.code, res.stderr).toBe(0);
    expect(sim.log.filter((e) => e.status === 429)).toEqual([]);
    expect(
      busiestWindow(
        sim.log.map((e) => e.at),
        250,
      ),
    ).toBeLessThanOrEqual(10);
    expect(blockedOps(sim)).toBe(0);
    const envs = sim.fleet.environments.size;
    for (const name of names) expect(readReport(join(dir, `${name}.json`)).summary.succeeded).toBe(envs);
  }, 90_000);

  it('two processes share one creation window: backups from both keep to the service’s creating-call limit, no 429', async () => {
    // General 40, creating calls 4, per 250 ms: each process alone would send 4 a window, 8 together. A backup
    // waits for the other process's on its environment to end: operations hidden 200 ms, not the profile's 2 s.
    const { sim } = await start({ profile: 'real', sites: 8, rate: '40/250ms', createRate: '4/250ms', operationDelayMs: 100, operationVisibleAfterMs: 200 });
    const r = await redis();
    const dir = tempDir();
    const results = await Promise.all(
      ['left', 'right'].map((name) =>
        runCli(
          [
            '--coordination',
            r.url,
            '--rate',
            '40/250ms',
            '--create-rate',
            '4/250ms',
            'run',
            writePlaybook(backups(name), dir, `${name}.yaml`),
            '--yes',
            '--poll-interval',
            '50',
            '--report',
            join(dir, `${name}.json`),
          ],
          simEnv(sim),
        ),
      ),
    );
    for (const res of results) expect(res.code, res.stderr).toBe(0);
    const created = sim.log.filter((e) => e.endpoint === 'addManualBackup');
    expect(created).toHaveLength(2 * sim.fleet.environments.size);
    expect(created.filter((e) => e.status === 429)).toEqual([]);
    expect(
      busiestWindow(
        created.map((e) => e.at),
        250,
      ),
    ).toBeLessThanOrEqual(4);
  }, 60_000);

  it('Redis stopped mid-run: exit 3 saying why, report and journal intact, and resume finishes once Redis is back', async () => {
    const { sim } = await start({ sites: 12, rate: '10/500ms', operationDelayMs: 0 });
    const r = await redis();
    const dir = tempDir();
    const playbook = writePlaybook(backups('nightly', 'lock: company'), dir);
    const report = join(dir, 'r.json');
    const env = simEnv(sim);
    const run = startCli(['--coordination', r.url, '--rate', '10/500ms', 'run', playbook, '--yes', '--report', report], env);
    await waitFor(() => sim.log.filter((e) => e.method === 'POST').length >= 5, 20_000);
    await r.stop();
    const res = await run.done;
    expect(res.code).toBe(3);
    expect(res.stderr + res.stdout).toMatch(new RegExp(`lost contact with Redis at redis://127.0.0.1:${r.port}/0`));
    const stopped = readReport(report);
    expect(stopped.stopped?.kind).toBe('coordination');
    const accepted = stopped.summary.accepted;
    expect(accepted).toBeGreaterThanOrEqual(5);
    expect(accepted).toBeLessThan(stopped.summary.total);
    expect(stopped.summary.failed + stopped.summary.unknown).toBe(0);

    const refused = await runCli(['--coordination', r.url, 'resume', report, '--yes'], env);
    expect(refused.code).toBe(3);
    expect(refused.stderr).toMatch(/cannot reach Redis at .*; nothing was sent/);

    await r.start();
    const resumed = await runCli(['--coordination', r.url, '--rate', '10/500ms', 'resume', report, '--yes'], env);
    expect(resumed.code, resumed.stderr).toBe(0);
    const done = readReport(report);
    expect(done.summary.accepted + done.summary.succeeded).toBe(done.summary.total);
    // Every environment got exactly one backup: nothing was sent twice, nothing dropped.
    const posts = sim.log.filter((e) => e.method === 'POST' && e.status === 202).map((e) => e.path);
    expect(posts.length).toBe(sim.fleet.environments.size);
    expect(new Set(posts).size).toBe(posts.length);
    // The journal remembers the Redis: continuing without it is said, not silent.
    const uncoordinated = await runCli(['--rate', '10/500ms', 'status', report], env);
    expect(uncoordinated.stderr).toMatch(
      new RegExp(
        `warning: this run was coordinated through redis://127.0.0.1:${r.port}/0; without --coordination .* shares no lock or budget with other machines`,
      ),
    );
    // The report records it too: with the journal gone (moved, lost with a disk), status still says so.
    expect(readReport(report).lock).toEqual({ scope: 'company', coordination: `redis://127.0.0.1:${r.port}/0` });
    renameSync(journalPathFor(report), `${journalPathFor(report)}.moved`);
    const withoutJournal = await runCli(['--rate', '10/500ms', 'status', report], env);
    expect(withoutJournal.code, withoutJournal.stderr).toBe(0);
    expect(withoutJournal.stderr).toContain(`warning: this run was coordinated through redis://127.0.0.1:${r.port}/0`);
  }, 90_000);
});
