import { spawn } from 'node:child_process';
import { existsSync, readFileSync, statSync, writeFileSync, mkdirSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { Report } from '../../src/report/report.js';
import { readJournal } from '../../src/run/journal.js';
import { Random } from '../../src/sim/random.js';
import type { Simulator } from '../../src/sim/server.js';
import { CLI, runCli, simEnv, startCliInProcess, tempDir, writePlaybook } from '../helpers/cli.js';
import { useSimulator, waitFor, whenAnswered } from '../helpers/sim.js';

const start = useSimulator();

function readReport(path: string): Report {
  return JSON.parse(readFileSync(path, 'utf8')) as Report;
}

/**
 * Starts the CLI and SIGKILLs it once its journal has grown `moreBytes` past its first record of its own
 * (the run's start, a resume's): a random point of its work, chosen by what it wrote, not by the time it
 * took (a loaded machine's slow start, a fast machine's run that ended before the kill). Resolves with
 * its exit code, null when killed.
 */
function runAndKill(args: string[], env: Record<string, string>, journal: string, moreBytes: number): Promise<number | null> {
  return new Promise((resolve) => {
    const size = () => (existsSync(journal) ? statSync(journal).size : 0);
    const initial = size();
    let killAt: number | undefined;
    const child = spawn(process.execPath, [CLI, ...args], {
      env: { PATH: process.env.PATH, HOME: process.env.HOME, ...env },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const watch = setInterval(() => {
      const now = size();
      if (killAt === undefined && now > initial) killAt = now + moreBytes;
      if (killAt !== undefined && now >= killAt) child.kill('SIGKILL');
    }, 10);
    child.on('close', (code) => {
      clearInterval(watch);
      if (code !== null && code !== 0 && code !== 1) process.stderr.write(stderr);
      resolve(code);
    });
  });
}

/**
 * The guarantees, checked against the simulator's own request log:
 * - no creating call (a backup) reached the server twice for one step;
 * - every operation id in the report is one the simulator issued for that very call;
 * - every call the simulator accepted and answered is in the report with its operation id, or its
 *   step is `unknown` (the answer was lost, or in flight when the client died).
 */
function checkAgainstLog(sim: Simulator, report: Report) {
  const posts = sim.log.filter((e) => e.method === 'POST' && e.status !== 0 && e.status !== 429 && !String(e.status).startsWith('5'));
  const byPath = new Map<string, typeof posts>();
  for (const e of posts) byPath.set(e.path, [...(byPath.get(e.path) ?? []), e]);
  for (const [path, entries] of byPath)
    expect(
      entries.filter((e) => e.changed),
      path,
    ).toHaveLength(1);
  const issued = new Map(sim.log.filter((e) => e.operation_id && e.endpoint !== 'getOperation').map((e) => [e.operation_id!, e]));
  for (const r of report.results) {
    if (r.operation_id) expect(`/v2${r.request!.path}`).toBe(issued.get(r.operation_id)?.path);
  }
  const reported = new Set(report.results.map((r) => r.operation_id).filter(Boolean));
  for (const [id, e] of issued) {
    if (reported.has(id)) continue;
    const result = report.results.find(
      (r) => r.request && `/v2${r.request.path}` === e.path && r.request.method === e.method && JSON.stringify(r.request.body) === JSON.stringify(e.body),
    );
    // The client never heard of this id: its step is unknown, or (a call safe to repeat whose answer
    // was lost or garbled) it was sent again and the report holds the later id.
    const resent = (e.fault === 'lost' || e.fault === 'malformed') && result !== undefined && result.attempts > 1;
    if (!resent) expect(result?.status, `${e.method} ${e.path} was accepted as ${id}`).toBe('unknown');
  }
}

describe('crash safety', () => {
  it('SIGKILL at random points of a 140-step run, resumed each time: nothing lost, no creating call twice', { timeout: 120_000 }, async () => {
    const { sim } = await start({ sites: 40, themes: 4, operationDelayMs: 0, latencyMs: [5, 15], seed: 21 });
    const dir = tempDir();
    const env = simEnv(sim);
    const file = writePlaybook(
      'version: 1\nname: chaos\nsettings: { concurrency: 4, rate_limit: 5000/s }\ntasks:\n  - { name: backup, action: backups.create, target: all, with: { tag: chaos } }\n  - { name: ips, action: denied_ips.set, target: all, with: { ip_list: ["203.0.113.9"] } }\n',
      dir,
    );
    const steps = sim.fleet.environments.size * 2;
    expect(steps).toBeGreaterThanOrEqual(140);
    const report = join(dir, 'report.json');
    const journal = join(dir, 'report.journal.jsonl');
    const rng = new Random(4242);
    // A step journals some 500 bytes: each process is killed after journaling up to a quarter of the
    // run, so the first three kills always land in it, and the six together reach most of it.
    const share = Math.round((steps * 500) / 4);
    // The kills that landed while there was work going on (the journal grew and did not end), and the
    // tasks whose steps were being sent then (the last one begun).
    let midRun = 0;
    const sending = new Set<string>();
    let lines = 0;
    for (let i = 0; i < 6; i++) {
      const args = existsSync(journal) ? ['resume', report, '--yes'] : ['run', file, '--yes', '--report', report];
      const code = await runAndKill(args, env, journal, rng.int(0, share));
      // Killed (null), or it ended on its own: then with a run's exit code, never "cannot resume" (2).
      if (code !== null) expect([0, 1], `${args[0]} exited ${code}`).toContain(code);
      const text = existsSync(journal) ? readFileSync(journal, 'utf8').trim().split('\n') : [];
      if (text.length > lines && !text.at(-1)!.includes('"t":"end"')) {
        midRun++;
        // A kill may cut the last line short: its task is read from its start.
        const begun = text.map((line) => /^\{"t":"intent","step":"(\d+):/.exec(line)?.[1]).findLast((task) => task !== undefined);
        if (begun) sending.add(begun);
      }
      lines = text.length;
    }
    const final = await runCli(['resume', report, '--yes'], env);
    expect([0, 1]).toContain(final.code);
    const result = readReport(report);
    expect(result.summary.total).toBe(steps);
    expect(result.results.every((r) => ['accepted', 'succeeded', 'unknown'].includes(r.status))).toBe(true);
    // Idempotent calls left without an answer were sent again; only creating calls may stay unknown.
    expect(result.results.filter((r) => r.action === 'denied_ips.set').every((r) => r.status === 'succeeded')).toBe(true);
    checkAgainstLog(sim, result);
    expect(midRun).toBeGreaterThanOrEqual(3);
    // Kills while creating calls were sent (backups: never twice), and while idempotent ones were (sent again).
    expect([...sending].sort()).toEqual(['0', '1']);
    expect(readJournal(journal).resumes).toBeGreaterThanOrEqual(1);
  });

  it('Ctrl-C lets the calls in flight end, writes the report, exits 130; resume finishes the job', async () => {
    const { sim } = await start({ sites: 20, operationDelayMs: 0, latencyMs: [20, 30] });
    const dir = tempDir();
    const file = writePlaybook(
      'version: 1\nname: int\nsettings: { concurrency: 2, rate_limit: 5000/s }\ntasks:\n  - { name: backup, action: backups.create, target: all, with: { tag: i } }\n',
      dir,
    );
    const report = join(dir, 'r.json');
    // Ctrl-C once the fifth backup was answered, its answer on its way and the next call in flight. In this process:
    // what a run does with Ctrl-C is the point here (watching.test.ts sends a process of its own SIGINT).
    let interrupt = () => {};
    whenAnswered(sim, 'addManualBackup', 5, () => interrupt());
    const running = await startCliInProcess(['run', file, '--yes', '--report', report], simEnv(sim));
    interrupt = running.interrupt;
    const { code } = await running.done;
    expect(code).toBe(130);
    const interrupted = readReport(report);
    expect(interrupted.stopped?.kind).toBe('interrupted');
    expect(interrupted.summary.unknown).toBe(0); // in-flight calls were let end
    expect(interrupted.summary.skipped).toBeGreaterThan(0);
    const resumed = await runCli(['resume', report, '--yes'], simEnv(sim));
    expect(resumed.code).toBe(0);
    expect(resumed.stdout).toMatch(/\d+ never sent: will be sent/);
    const done = readReport(report);
    expect(done.summary.accepted).toBe(sim.fleet.environments.size);
    checkAgainstLog(sim, done);
  });

  it('a fault mix: every step ends, the report agrees with the simulator, no creating call applied twice', { timeout: 60_000 }, async () => {
    const { sim } = await start({ sites: 70, operationDelayMs: 0, seed: 5, faults: '5xx=0.05,reset=0.02,lost=0.01,429=0.01,slow=0.02', slowMs: 300 });
    const dir = tempDir();
    const file = writePlaybook(
      'version: 1\nname: mix\nsettings: { concurrency: 8, rate_limit: 5000/s }\ntasks:\n  - { name: backup, action: backups.create, target: all, with: { tag: m } }\n  - { name: php, action: php.set_version, target: all, with: { php_version: "8.3" } }\n',
      dir,
    );
    const report = join(dir, 'r.json');
    const result = await runCli(['run', file, '--yes', '--report', report, '--poll-interval', '20'], simEnv(sim));
    expect([0, 1]).toContain(result.code);
    const parsed = readReport(report);
    expect(parsed.results.every((r) => ['accepted', 'succeeded', 'failed', 'unknown'].includes(r.status))).toBe(true);
    expect(sim.log.some((e) => e.fault)).toBe(true);
    checkAgainstLog(sim, parsed);
  });
});

describe('status, resume bookkeeping and the run lock', () => {
  it('`sitefleet status` polls accepted operations and rewrites the report and journal', async () => {
    const { sim } = await start({ sites: 5, operationDelayMs: 400 });
    const dir = tempDir();
    const file = writePlaybook('version: 1\nname: s\ntasks:\n  - { name: backup, action: backups.create, target: all, with: { tag: s } }\n', dir);
    const report = join(dir, 'r.json');
    expect((await runCli(['run', file, '--yes', '--report', report], simEnv(sim))).code).toBe(0);
    expect(readReport(report).summary.accepted).toBe(sim.fleet.environments.size);
    const status = await runCli(['status', report, '--wait', '10s', '--poll-interval', '50'], simEnv(sim));
    expect(status.code).toBe(0);
    const after = readReport(report);
    expect(after.summary.succeeded).toBe(sim.fleet.environments.size);
    expect(after.summary.accepted).toBe(0);
    const state = readJournal(join(dir, 'r.journal.jsonl'));
    expect([...state.results.values()].every((r) => r.status === 'succeeded')).toBe(true);
  });

  it('resuming a run that ended sends nothing and needs no --yes: it says so and exits with the report’s code', async () => {
    const { sim } = await start({ sites: 3, operationDelayMs: 0 });
    const dir = tempDir();
    const file = writePlaybook('version: 1\nname: e\ntasks:\n  - { name: backup, action: backups.create, target: all, with: { tag: e } }\n', dir);
    const report = join(dir, 'r.json');
    expect((await runCli(['run', file, '--yes', '--report', report], simEnv(sim))).code).toBe(0);
    const requests = sim.log.length;
    const again = await runCli(['resume', report], simEnv(sim));
    expect(again.code).toBe(0);
    expect(again.stdout).toContain('nothing left to send: every step has ended.');
    expect(sim.log).toHaveLength(requests);
    expect(readJournal(join(dir, 'r.journal.jsonl')).resumes).toBe(0);
    expect(readReport(report).summary.accepted).toBe(sim.fleet.environments.size);
  });

  it('run --wait tracks operations: succeeded, with a 404 "not visible yet" tolerated', async () => {
    // Each operation answers its first poll 404 and its second 202 (running), whenever they come.
    const { sim } = await start({ sites: 4, operationDelayMs: 0, operationPolls: { hidden: 1, running: 1 } });
    const dir = tempDir();
    const file = writePlaybook('version: 1\nname: w\ntasks:\n  - { name: backup, action: backups.create, target: all, with: { tag: w } }\n', dir);
    const args = ['--rate', '50/s', 'run', file, '--yes', '--wait', '--report', join(dir, 'r.json'), '--poll-interval', '30'];
    const result = await runCli(args, simEnv(sim));
    expect(result.code).toBe(0);
    const envs = sim.fleet.environments.size;
    expect(readReport(join(dir, 'r.json')).summary.succeeded).toBe(envs);
    const polls = sim.log.filter((e) => e.endpoint === 'getOperation');
    expect(polls.filter((e) => e.status === 404)).toHaveLength(envs);
    expect(polls.filter((e) => e.status === 202)).toHaveLength(envs);
  });

  it('a second run for the company exits 4 naming the holder; a stale lock is taken over; --wait-lock waits', async () => {
    const { sim } = await start({ sites: 2, operationDelayMs: 0 });
    const env = simEnv(sim);
    const locks = join(env.SITEFLEET_STATE_DIR!, 'locks');
    mkdirSync(locks, { recursive: true });
    const lockFile = join(locks, `${sim.companyId}.lock`);
    const file = writePlaybook('version: 1\nname: l\ntasks:\n  - { name: backup, action: backups.create, target: all, with: { tag: l } }\n');

    // A live holder: this test process.
    writeFileSync(lockFile, JSON.stringify({ pid: process.pid, host: hostname(), started_at: '2026-11-22T01:00:00.000Z', command: 'run nightly.yaml' }));
    const held = await runCli(['run', file, '--yes', '--report', join(tempDir(), 'r.json')], env);
    expect(held.code).toBe(4);
    expect(held.stderr).toContain(`pid ${process.pid} on ${hostname()}, started 2026-11-22T01:00:00.000Z (run nightly.yaml)`);
    expect(sim.log.filter((e) => e.method === 'POST')).toEqual([]);

    // In this process (the lock file names a process, not the run's own): once it says it waits, the holder goes away (dies).
    let told = '';
    const waiting = await startCliInProcess(['run', file, '--yes', '--wait-lock', '--report', join(tempDir(), 'r.json')], env, {
      stderr: (text) => (told += text),
    });
    await waitFor(() => told.includes('waiting for the lock held by pid'), 20_000);
    expect(sim.log.filter((e) => e.method === 'POST')).toEqual([]);
    writeFileSync(lockFile, JSON.stringify({ pid: 2 ** 22 + 12345, host: hostname(), started_at: '2026-11-22T01:00:00.000Z', command: 'run' }));
    // Bounded: a run that never takes it over would wait on in this process (Ctrl-C ends it).
    await waitFor(() => told.includes('took over a stale lock'), 20_000).catch((error: unknown) => {
      waiting.interrupt();
      throw error;
    });
    const waited = await waiting.done;
    expect(waited.code).toBe(0);
    expect(waited.stderr).toContain('waiting for the lock held by pid');
    expect(waited.stderr).toContain('took over a stale lock');
    expect(existsSync(lockFile)).toBe(false); // released at the end
  });
});
