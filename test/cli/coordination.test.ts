import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { Report } from '../../src/report/report.js';
import { BLOCKED_MESSAGE } from '../../src/sim/operations.js';
import type { Simulator } from '../../src/sim/server.js';
import { runCli, runCliProcess, simEnv, startCli, tempDir, writePlaybook } from '../helpers/cli.js';
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

describe('--coordination: one lock per scope across machines', () => {
  it('a run on another machine (its own state dir) exits 4 at once naming the holder; a killed holder is taken over within its lease + 1 s', async () => {
    const { sim } = await start({ sites: 4, operationDelayMs: 4000 });
    const r = await redis();
    const url = `${r.url}?lease=2s`;
    const dir = tempDir();
    const playbook = writePlaybook(backups('nightly', 'lock: company', true), dir);
    const holder = startCli(['--coordination', url, 'run', playbook, '--yes', '--report', join(dir, 'a.json')], simEnv(sim));
    await waitFor(() => existsSync(join(dir, 'a.journal.jsonl')), 20_000);

    const second = await runCli(['--coordination', url, 'run', playbook, '--yes', '--report', join(dir, 'b.json')], simEnv(sim)); // another state dir
    // At once: while the holder still runs (its operations take 4 s and it waits for them), not after it let go.
    expect(holder.child.exitCode).toBe(null);
    expect(second.stderr).not.toMatch(/waiting for the lock/);
    expect(second.code).toBe(4);
    expect(second.stderr).toMatch(new RegExp(`holds the lock for this company: pid ${holder.child.pid} on \\S+, started \\S+ \\(run `));
    expect(second.stderr).toMatch(/lets go by itself within 2s/);

    holder.child.kill('SIGKILL');
    const killedAt = Date.now();
    await holder.done;
    const third = startCli(['--coordination', url, 'run', playbook, '--yes', '--wait-lock', '--report', join(dir, 'c.json')], simEnv(sim));
    await waitFor(() => /took over the lock/.test(third.stderr()), 10_000);
    expect(Date.now() - killedAt).toBeLessThan(2000 + 1000);
    expect(third.stderr()).toMatch(new RegExp(`took over the lock from pid ${holder.child.pid} on \\S+ .*: it stopped renewing its 2s lease`));
    expect((await third.done).code).toBe(0);
  }, 60_000);

  it('lock: playbook lets two playbooks of one company run together; the same playbook twice exits 4; without coordination it warns', async () => {
    const { sim } = await start({ sites: 4, operationDelayMs: 2000 });
    const r = await redis();
    const dir = tempDir();
    const first = writePlaybook(backups('first', 'lock: playbook', true), dir, 'first.yaml');
    const second = writePlaybook(backups('second', 'lock: playbook', true), dir, 'second.yaml');
    const a = startCli(['--coordination', r.url, 'run', first, '--yes', '--report', join(dir, 'a.json')], simEnv(sim));
    await waitFor(() => existsSync(join(dir, 'a.journal.jsonl')), 20_000);
    const wholeCompany = writePlaybook(backups('whole', 'lock: company'), dir, 'whole.yaml');
    const [b, again, company] = await Promise.all([
      runCli(['--coordination', r.url, 'run', second, '--yes', '--report', join(dir, 'b.json')], simEnv(sim)),
      runCli(['--coordination', r.url, 'run', first, '--yes', '--report', join(dir, 'c.json')], simEnv(sim)),
      runCli(['--coordination', r.url, 'run', wholeCompany, '--yes', '--report', join(dir, 'e.json')], simEnv(sim)),
    ]);
    expect(again.code).toBe(4);
    expect(again.stderr).toMatch(/holds the lock for playbook "first" of this company/);
    // A company-wide run has the company to itself: it waits for the playbooks' runs.
    expect(company.code).toBe(4);
    expect(company.stderr).toMatch(/holds the lock for playbook "(first|second)" of this company/);
    expect(b.code).toBe(0);
    expect((await a.done).code).toBe(0);
    expect(blockedOps(sim)).toBe(0);

    const alone = await runCli(['run', second, '--yes', '--report', join(dir, 'd.json')], simEnv(sim));
    expect(alone.stderr).toMatch(/warning: lock: playbook without --coordination: .* each learns the rate limit from 429s on its own/);
  }, 60_000);
});

describe('lock scopes on one machine (no coordination)', () => {
  it('a company-wide run and a playbook-scoped run exclude each other; two playbooks do not', async () => {
    const { sim } = await start({ sites: 4, operationDelayMs: 2000 });
    const dir = tempDir();
    const env = simEnv(sim); // one state dir for all: one machine
    const first = writePlaybook(backups('first', 'lock: playbook', true), dir, 'first.yaml');
    const holder = startCli(['run', first, '--yes', '--report', join(dir, 'a.json')], env);
    await waitFor(() => existsSync(join(dir, 'a.journal.jsonl')), 20_000);
    const company = await runCli(['run', writePlaybook(backups('whole', 'lock: company'), dir, 'whole.yaml'), '--yes', '--report', join(dir, 'b.json')], env);
    expect(company.code).toBe(4);
    expect(company.stderr).toMatch(/holds the lock for playbook "first" of this company: pid \d+/);
    const other = await runCli(['run', writePlaybook(backups('second', 'lock: playbook'), dir, 'second.yaml'), '--yes', '--report', join(dir, 'c.json')], env);
    expect(other.code).toBe(0);
    expect((await holder.done).code).toBe(0);

    const whole = startCli(['run', writePlaybook(backups('whole2', 'lock: company', true), dir, 'whole2.yaml'), '--yes', '--report', join(dir, 'd.json')], env);
    await waitFor(() => existsSync(join(dir, 'd.journal.jsonl')), 20_000);
    const blocked = await runCli(['run', first, '--yes', '--report', join(dir, 'e.json')], env);
    expect(blocked.code).toBe(4);
    expect(blocked.stderr).toMatch(/holds the lock for this company: pid \d+/);
    expect((await whole.done).code).toBe(0);
  }, 60_000);
});

describe('--coordination: one rate budget and one set of busy environments per company', () => {
  it('three playbooks on the same environments together: never more than R in a window, no 429, nothing blocked', async () => {
    // 10 per 500 ms: the shape of 120/min, 6 times faster.
    const { sim } = await start({ sites: 8, rate: '10/500ms', operationDelayMs: [300, 900] });
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
            '10/500ms',
            'run',
            writePlaybook(backups(name, 'lock: playbook', true), dir, `${name}.yaml`),
            '--yes',
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
        500,
      ),
    ).toBeLessThanOrEqual(10);
    expect(blockedOps(sim)).toBe(0);
    const envs = sim.fleet.environments.size;
    for (const name of names) expect(readReport(join(dir, `${name}.json`)).summary.succeeded).toBe(envs);
  }, 90_000);

  it('two processes share one creation window: backups from both keep to the service’s creating-call limit, no 429', async () => {
    // General 40 a second, creating calls 4 a second: each process alone would send 4 a second, 8 together.
    const { sim } = await start({ profile: 'real', sites: 8, rate: '40/s', createRate: '4/s', operationDelayMs: 100 });
    const r = await redis();
    const dir = tempDir();
    const results = await Promise.all(
      ['left', 'right'].map((name) =>
        runCli(
          [
            '--coordination',
            r.url,
            '--rate',
            '40/s',
            '--create-rate',
            '4/s',
            'run',
            writePlaybook(backups(name), dir, `${name}.yaml`),
            '--yes',
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
        1000,
      ),
    ).toBeLessThanOrEqual(4);
  }, 60_000);

  it('Redis stopped mid-run: exit 3 saying why, report and journal intact, and resume finishes once Redis is back', async () => {
    const { sim } = await start({ sites: 30, rate: '10/500ms', operationDelayMs: 0 });
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
    const uncoordinated = await runCli(['status', report], env);
    expect(uncoordinated.stderr).toMatch(
      new RegExp(
        `warning: this run was coordinated through redis://127.0.0.1:${r.port}/0; without --coordination .* shares no lock or budget with other machines`,
      ),
    );
  }, 90_000);
});

describe('--coordination is optional', () => {
  it('without the flag nothing of Redis is loaded; with it, it is (the check can fail)', async () => {
    const { sim } = await start({ sites: 2 });
    const r = await redis();
    const dir = tempDir();
    const playbook = writePlaybook(backups('x', 'lock: company'), dir);
    // A module hook that refuses to resolve ioredis: a command that loads it fails.
    const hook = `data:text/javascript,${encodeURIComponent(
      `import { register } from 'node:module'; register('data:text/javascript,' + encodeURIComponent('export async function resolve(s, c, n) { if (s === "ioredis") throw new Error("ioredis was loaded"); return n(s, c); }'));`,
    )}`;
    // A process of its own: what a command loads is the process's, and the hook is set at its start.
    const env = { ...simEnv(sim), NODE_OPTIONS: `--import=${hook}` };
    const plain = await runCliProcess(['run', playbook, '--yes', '--report', join(dir, 'a.json')], env);
    expect(plain.code, plain.stderr).toBe(0);
    const coordinated = await runCliProcess(['--coordination', r.url, 'run', playbook, '--yes', '--report', join(dir, 'b.json')], env);
    expect(coordinated.code).not.toBe(0);
    expect(coordinated.stderr).toMatch(/ioredis was loaded/);
  });

  it('a bad --coordination URL is exit 2, an unreachable Redis exit 3, and nothing is sent', async () => {
    const { sim } = await start({ sites: 2 });
    const dir = tempDir();
    const playbook = writePlaybook(backups('x', 'lock: company'), dir);
    const bad = await runCli(['--coordination', 'http://127.0.0.1:1/0', 'run', playbook, '--yes'], simEnv(sim));
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/--coordination http:\/\/127.0.0.1:1\/0: only redis:\/\/ and rediss:\/\/ URLs are understood/);
    const r = await redis();
    await r.stop();
    const down = await runCli(['run', playbook, '--yes', '--report', join(dir, 'a.json')], { ...simEnv(sim), SITEFLEET_COORDINATION: r.url });
    expect(down.code).toBe(3);
    expect(down.stderr).toMatch(new RegExp(`cannot reach Redis at redis://127.0.0.1:${r.port}/0 for --coordination .*; nothing was sent`));
    expect(sim.log).toEqual([]);
    const doctor = await runCli(['doctor', '--report-dir', dir], { ...simEnv(sim), SITEFLEET_COORDINATION: r.url });
    expect(doctor.code).toBe(3);
    expect(doctor.stdout).toMatch(/fail\s+coordination\s+cannot reach Redis/);
  });

  it('a Redis that refuses the scripts (an ACL without EVAL) is exit 3 naming that, and nothing is sent', async () => {
    const { sim } = await start({ sites: 2 });
    const r = await redis();
    const { Redis } = await import('ioredis');
    const admin = new Redis(r.port, '127.0.0.1');
    await admin.call('ACL', 'SETUSER', 'limited', 'on', '>secret-pw', '~*', '+@all', '-evalsha', '-eval');
    await admin.quit();
    const dir = tempDir();
    const res = await runCli(['run', writePlaybook(backups('x', 'lock: company'), dir), '--yes', '--report', join(dir, 'a.json')], {
      ...simEnv(sim),
      SITEFLEET_COORDINATION: `redis://limited:secret-pw@127.0.0.1:${r.port}/0`,
    });
    expect(res.code).toBe(3);
    expect(res.stderr).toMatch(new RegExp(`Redis at redis://127.0.0.1:${r.port}/0 refused a coordination script \\(NOPERM`));
    expect(res.stderr).not.toContain('secret-pw');
    expect(sim.log).toEqual([]);
  });
});
