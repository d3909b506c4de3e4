import { appendFileSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { Report } from '../../src/report/report.js';
import { readJournal } from '../../src/run/journal.js';
import type { SimLogEntry, Simulator } from '../../src/sim/server.js';
import { runCli, simEnv, startCliInProcess, tempDir, writePlaybook } from '../helpers/cli.js';
import { useSimulator, whenAnswered } from '../helpers/sim.js';

const start = useSimulator();

function readReport(path: string): Report {
  return JSON.parse(readFileSync(path, 'utf8')) as Report;
}

const backups = (tag: string, settings = '') =>
  `version: 1\nname: b\n${settings}tasks:\n  - { name: backup, action: backups.create, target: all, with: { tag: ${tag} } }\n`;

describe('the lock comes first', () => {
  it('an overlapping run exits 4 naming the holder without a single request, not even a read', async () => {
    const { sim } = await start({ sites: 3 });
    const env = simEnv(sim);
    const locks = join(env.SITEFLEET_STATE_DIR!, 'locks');
    mkdirSync(locks, { recursive: true });
    writeFileSync(
      join(locks, `${sim.companyId}.lock`),
      JSON.stringify({ pid: process.pid, host: hostname(), started_at: '2026-11-22T01:00:00.000Z', command: 'run nightly.yaml' }),
    );
    const held = await runCli(['run', writePlaybook(backups('x')), '--yes', '--report', join(tempDir(), 'r.json')], env);
    expect(held.code).toBe(4);
    expect(held.stderr).toContain(`pid ${process.pid} on ${hostname()}`);
    expect(sim.log).toEqual([]);
    // plan and --dry-run take no lock
    expect((await runCli(['run', writePlaybook(backups('x')), '--dry-run', '--report', join(tempDir(), 'd.json')], env)).code).toBe(0);
  });

  it('five runs racing for a stale lock: exactly one runs, four exit 4, and only the winner reads or writes', { timeout: 60_000 }, async () => {
    // The winner waits for its operations, which end only once the four others have (the simulator's clock
    // stands still until then): all five overlap however slowly each starts. A second fleet read (a lock
    // that let two runs in) lets time go on too, so that a broken lock fails the test, not its timeout.
    let stopped: number | undefined = Date.now();
    const { sim } = await start({ sites: 6, operationDelayMs: 1, now: () => stopped ?? Date.now() });
    whenAnswered(sim, 'listThemes', 2, () => (stopped = undefined));
    const env = simEnv(sim);
    const locks = join(env.SITEFLEET_STATE_DIR!, 'locks');
    mkdirSync(locks, { recursive: true });
    writeFileSync(
      join(locks, `${sim.companyId}.lock`),
      JSON.stringify({ pid: 2 ** 22 + 4321, host: hostname(), started_at: '2026-11-22T01:00:00.000Z', command: 'run (killed)' }),
    );
    const file = writePlaybook(backups('race', 'settings: { wait: true, rate_limit: 50/s }\n'));
    const runs = Array.from({ length: 5 }, (_, i) => runCli(['run', file, '--yes', '--poll-interval', '50', '--report', join(tempDir(), `r${i}.json`)], env));
    let ended = 0;
    for (const run of runs) void run.then(() => ++ended === 4 && (stopped = undefined));
    const results = await Promise.all(runs);
    const codes = results.map((r) => r.code).sort();
    expect(codes).toEqual([0, 4, 4, 4, 4]);
    expect(results.filter((r) => r.stderr.includes('took over a stale lock'))).toHaveLength(1);
    expect(sim.log.filter((e) => e.method === 'POST')).toHaveLength(sim.fleet.environments.size);
    expect(sim.log.filter((e) => e.path.endsWith('/wp-themes'))).toHaveLength(1);
  });
});

/** Calls `act` once the simulator has answered a creating call (POST) with a 429. */
function whenAnswered429(sim: Simulator, act: () => void): void {
  let done = false;
  const push = sim.log.push.bind(sim.log);
  sim.log.push = (...entries: SimLogEntry[]) => {
    const length = push(...entries);
    if (!done && entries.some((e) => e.status === 429 && e.method === 'POST')) {
      done = true;
      queueMicrotask(act);
    }
    return length;
  };
}

describe('what never reached the service is sent by resume', () => {
  it('Ctrl-C while steps wait out a 429: they end skipped ("not accepted"), never failed, and resume sends them', async () => {
    // Backups are creating calls, with a limit of their own: the reads before them (each environment's
    // backup list, its slots counted) learn the general one, and the backups still meet theirs.
    // Windows of a quarter second, Retry-After counted in 50 ms: each refusal is waited out in a fraction of a second.
    const { sim } = await start({ sites: 4, operationDelayMs: 0, rate: '5/250ms', createRate: '2/250ms', retryAfterUnitMs: 50 });
    const dir = tempDir();
    const report = join(dir, 'r.json');
    // In this process: Ctrl-C is delivered as a terminal would (only SIGKILL needs a process of its own).
    const running = await startCliInProcess(
      ['run', writePlaybook(backups('pause', 'settings: { rate_limit: 100/s, concurrency: 4 }\n'), dir), '--yes', '--report', report],
      simEnv(sim),
    );
    // A backup's own 429 (each environment's backup list is read first, to count its slots, and may meet one too).
    whenAnswered429(sim, running.interrupt);
    expect((await running.done).code).toBe(130);
    const interrupted = readReport(report);
    expect(interrupted.summary.failed).toBe(0);
    const refused = interrupted.results.filter((r) => r.status === 'skipped' && r.attempts > 0);
    expect(refused.length).toBeGreaterThan(0);
    expect(refused[0]!.reason).toMatch(/not accepted: the run stopped while the call waited to be retried/);
    sim.setRate(undefined);
    const resumed = await runCli(['resume', report, '--yes'], simEnv(sim));
    expect(resumed.code).toBe(0);
    expect(resumed.stdout).toMatch(new RegExp(`${interrupted.summary.skipped} never sent: will be sent`));
    const done = readReport(report);
    expect(done.summary.accepted).toBe(sim.fleet.environments.size);
    // one backup per environment: nothing was applied twice
    const applied = sim.log.filter((e) => e.method === 'POST' && e.changed).map((e) => e.path);
    expect(new Set(applied).size).toBe(applied.length);
  });
});

describe('journal windows, on purpose', () => {
  it('an empty or torn-at-the-start journal: resume says nothing was sent (exit 2), run starts afresh', async () => {
    const { sim } = await start({ sites: 3, operationDelayMs: 0 });
    for (const content of ['', '{"t":"start","v":1,"run_id":"x","plan":{"steps":[{"id"']) {
      const dir = tempDir();
      const report = join(dir, 'r.json');
      writeFileSync(join(dir, 'r.journal.jsonl'), content);
      const before = sim.log.length;
      const resumed = await runCli(['resume', report, '--yes'], simEnv(sim));
      expect(resumed.code).toBe(2);
      expect(resumed.stderr).toMatch(
        /nothing to resume: the run of .* was stopped before it sent anything; start it again with `sitefleet run PLAYBOOK --report/,
      );
      expect(sim.log).toHaveLength(before);
      const run = await runCli(['run', writePlaybook(backups('afresh'), dir), '--yes', '--report', report], simEnv(sim));
      expect(run.code).toBe(0);
      expect(run.stdout).toContain('belonged to a run stopped before it sent anything: starting afresh');
      expect(readReport(report).summary.accepted).toBe(sim.fleet.environments.size);
    }
  });

  it('a torn last record is cut off when the journal is opened: resume works, and so does every later one', async () => {
    const { sim } = await start({ sites: 4, operationDelayMs: 0 });
    const dir = tempDir();
    const report = join(dir, 'r.json');
    const journal = join(dir, 'r.journal.jsonl');
    expect((await runCli(['run', writePlaybook(backups('torn'), dir), '--yes', '--report', report], simEnv(sim))).code).toBe(0);
    // As if killed while appending one more record.
    appendFileSync(journal, '{"t":"update","step":"0:abc","result":{"st');
    const first = await runCli(['resume', report, '--yes'], simEnv(sim));
    expect(first.code).toBe(0);
    const second = await runCli(['resume', report, '--yes'], simEnv(sim));
    expect(second.code).toBe(0);
    expect(second.stdout).toContain('nothing left to send');
    expect(() => readJournal(journal)).not.toThrow();
    // The same --report again is another run's report: refused before the fleet is read.
    const requests = sim.log.length;
    const again = await runCli(['run', join(dir, 'playbook.yaml'), '--yes', '--report', report], simEnv(sim));
    expect(again.code).toBe(2);
    expect(again.stderr).toContain('this report belongs to another run (resume it with `sitefleet resume');
    expect(sim.log).toHaveLength(requests);
  });
});
