import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { BLOCKED_MESSAGE } from '../../src/sim/operations.js';
import type { Simulator } from '../../src/sim/server.js';
import { runCli, simEnv, startCli, startCliInProcess, tempDir, writePlaybook } from '../helpers/cli.js';
import { useRedis } from '../helpers/redis.js';
import { useSimulator, waitFor } from '../helpers/sim.js';

// Real redis-server processes, no Redis mocks behind these claims; a CLI process of its own where a holder is
// killed, or where two processes share a machine's lock files. Other runs go in-process, each its own state dir.
const start = useSimulator();
const redis = useRedis();

/** A playbook of one backup per environment, under its own name. */
function backups(name: string, settings = 'lock: playbook', wait = false): string {
  return `version: 1\nname: ${name}\nsettings: { ${settings} }\ntasks:\n  - { name: b, action: backups.create, target: all, wait: ${wait}, with: { tag: "${name}-{{env}}" } }\n`;
}

const blockedOps = (sim: Simulator) => [...sim.operations.all.values()].filter((op) => op.message === BLOCKED_MESSAGE).length;

// Every run at --rate 50/s: the service's default 2/s would spend seconds of each on reads and writes no lock is about.
/**
 * The simulator's clock at real speed, or (hurried) a hundred times faster: the holders' operations
 * (12 s) outlast however long the others take to be refused, and end at once after.
 */
function switchableClock() {
  let base = Date.now();
  let at = base;
  let speed = 1;
  const now = () => base + (Date.now() - at) * speed;
  const set = (next: number) => {
    base = now();
    at = Date.now();
    speed = next;
  };
  return { now, hurry: () => set(100), calm: () => set(1) };
}

describe('--coordination: one lock per scope across machines', () => {
  it('a run on another machine (its own state dir) exits 4 at once naming the holder; a killed holder is taken over within its lease + 1 s', async () => {
    // The holder must still run while a second process starts and is refused: seconds each beside a loaded machine.
    const clock = switchableClock();
    const { sim } = await start({ sites: 4, operationDelayMs: 12_000, now: clock.now });
    const r = await redis();
    const url = `${r.url}?lease=2s`;
    const dir = tempDir();
    const playbook = writePlaybook(backups('nightly', 'lock: company', true), dir);
    const holder = startCli(['--rate', '50/s', '--coordination', url, 'run', playbook, '--yes', '--report', join(dir, 'a.json')], simEnv(sim));
    await waitFor(() => existsSync(join(dir, 'a.journal.jsonl')), 60_000);

    const second = await runCli(['--rate', '50/s', '--coordination', url, 'run', playbook, '--yes', '--report', join(dir, 'b.json')], simEnv(sim)); // another state dir
    // At once: while the holder still runs (its operations take 4 s and it waits for them), not after it let go.
    expect(holder.child.exitCode).toBe(null);
    expect(second.stderr).not.toMatch(/waiting for the lock/);
    expect(second.code).toBe(4);
    expect(second.stderr).toMatch(new RegExp(`holds the lock for this company: pid ${holder.child.pid} on \\S+, started \\S+ \\(run `));
    expect(second.stderr).toMatch(/lets go by itself within 2s/);

    holder.child.kill('SIGKILL');
    const killedAt = Date.now();
    clock.hurry();
    await holder.done;
    // In this process: the holder's SIGKILL is what needs one of its own.
    let told = '';
    const third = await startCliInProcess(
      ['--rate', '50/s', '--coordination', url, 'run', playbook, '--yes', '--poll-interval', '50', '--wait-lock', '--report', join(dir, 'c.json')],
      simEnv(sim),
      { stderr: (text) => (told += text) },
    );
    // Within the lease + 1 s of the moment the third was there to take it (it reads the fleet first).
    await waitFor(() => /waiting for the lock|took over the lock/.test(told), 40_000);
    const readyAt = Date.now();
    await waitFor(() => /took over the lock/.test(told), 10_000);
    expect(Date.now() - Math.max(readyAt, killedAt + 2000)).toBeLessThan(1000);
    expect(told).toMatch(new RegExp(`took over the lock from pid ${holder.child.pid} on \\S+ .*: it stopped renewing its 2s lease`));
    expect((await third.done).code).toBe(0);
  }, 120_000);

  it('lock: playbook lets two playbooks of one company run together; the same playbook twice exits 4; without coordination it warns', async () => {
    const clock = switchableClock();
    const { sim } = await start({ sites: 4, operationDelayMs: 12_000, now: clock.now });
    const r = await redis();
    const dir = tempDir();
    const first = writePlaybook(backups('first', 'lock: playbook', true), dir, 'first.yaml');
    const second = writePlaybook(backups('second', 'lock: playbook', true), dir, 'second.yaml');
    // Each run in this process with a state dir of its own: machines that share only the Redis.
    const a = await startCliInProcess(
      ['--rate', '50/s', '--coordination', r.url, 'run', first, '--yes', '--poll-interval', '50', '--report', join(dir, 'a.json')],
      simEnv(sim),
    );
    await waitFor(() => existsSync(join(dir, 'a.journal.jsonl')), 60_000);
    const wholeCompany = writePlaybook(backups('whole', 'lock: company'), dir, 'whole.yaml');
    const running = runCli(
      ['--rate', '50/s', '--coordination', r.url, 'run', second, '--yes', '--poll-interval', '50', '--report', join(dir, 'b.json')],
      simEnv(sim),
    );
    const [again, company] = await Promise.all([
      runCli(['--rate', '50/s', '--coordination', r.url, 'run', first, '--yes', '--report', join(dir, 'c.json')], simEnv(sim)),
      runCli(['--rate', '50/s', '--coordination', r.url, 'run', wholeCompany, '--yes', '--report', join(dir, 'e.json')], simEnv(sim)),
    ]);
    clock.hurry();
    const b = await running;
    expect(again.code).toBe(4);
    expect(again.stderr).toMatch(/holds the lock for playbook "first" of this company/);
    // A company-wide run has the company to itself: it waits for the playbooks' runs.
    expect(company.code).toBe(4);
    expect(company.stderr).toMatch(/holds the lock for playbook "(first|second)" of this company/);
    expect(b.code).toBe(0);
    expect((await a.done).code).toBe(0);
    expect(blockedOps(sim)).toBe(0);

    const alone = await runCli(['--rate', '50/s', 'run', second, '--yes', '--poll-interval', '50', '--report', join(dir, 'd.json')], simEnv(sim));
    expect(alone.stderr).toMatch(/warning: lock: playbook without --coordination: .* each learns the rate limit from 429s on its own/);
  }, 120_000);
});

describe('lock scopes on one machine (no coordination)', () => {
  it('a company-wide run and a playbook-scoped run exclude each other; two playbooks do not', async () => {
    const clock = switchableClock();
    const { sim } = await start({ sites: 4, operationDelayMs: 12_000, now: clock.now });
    const dir = tempDir();
    const env = simEnv(sim); // one state dir for all: one machine
    const first = writePlaybook(backups('first', 'lock: playbook', true), dir, 'first.yaml');
    const holder = startCli(['--rate', '50/s', 'run', first, '--yes', '--poll-interval', '50', '--report', join(dir, 'a.json')], env);
    await waitFor(() => existsSync(join(dir, 'a.journal.jsonl')), 60_000);
    const company = await runCli(
      ['--rate', '50/s', 'run', writePlaybook(backups('whole', 'lock: company'), dir, 'whole.yaml'), '--yes', '--report', join(dir, 'b.json')],
      env,
    );
    expect(company.code).toBe(4);
    expect(company.stderr).toMatch(/holds the lock for playbook "first" of this company: pid \d+/);
    const other = await runCli(
      ['--rate', '50/s', 'run', writePlaybook(backups('second', 'lock: playbook'), dir, 'second.yaml'), '--yes', '--report', join(dir, 'c.json')],
      env,
    );
    expect(other.code).toBe(0);
    clock.hurry();
    expect((await holder.done).code).toBe(0);
    clock.calm();

    const whole = await startCliInProcess(
      [
        '--rate',
        '50/s',
        'run',
        writePlaybook(backups('whole2', 'lock: company', true), dir, 'whole2.yaml'),
        '--yes',
        '--poll-interval',
        '50',
        '--report',
        join(dir, 'd.json'),
      ],
      env,
    );
    await waitFor(() => existsSync(join(dir, 'd.journal.jsonl')), 60_000);
    const blocked = await runCli(['--rate', '50/s', 'run', first, '--yes', '--report', join(dir, 'e.json')], env);
    expect(blocked.code).toBe(4);
    expect(blocked.stderr).toMatch(/holds the lock for this company: pid \d+/);
    clock.hurry();
    expect((await whole.done).code).toBe(0);
  }, 120_000);
});
