import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { Report } from '../../src/report/report.js';
import { readJournal } from '../../src/run/journal.js';
import { CLI, runCli, simEnv, tempDir, writePlaybook } from '../helpers/cli.js';
import { useSimulator, waitFor } from '../helpers/sim.js';

const start = useSimulator();

function readReport(path: string): Report {
  return JSON.parse(readFileSync(path, 'utf8')) as Report;
}

/** Starts the CLI; `interrupt` sends a signal; `done` resolves with the exit code and when it came. */
function startCli(args: string[], env: Record<string, string>) {
  const child = spawn(process.execPath, [CLI, ...args], { env: { PATH: process.env.PATH, HOME: process.env.HOME, ...env }, stdio: 'ignore' });
  const done = new Promise<{ code: number | null; at: number }>((resolve) => child.on('close', (code) => resolve({ code, at: Date.now() })));
  return { child, done };
}

describe('watching operations through one watcher', () => {
  it(
    'Ctrl-C while operations are watched exits 130 at once and leaves them accepted; status --wait and resume --wait finish them',
    { timeout: 90_000 },
    async () => {
      // Operations of a minute on the simulator's clock, which the test moves on once the run is gone:
      // however slowly the machine runs, none can end while the run watches them.
      let ahead = 0;
      const { sim } = await start({ sites: 8, operationDelayMs: 60_000, now: () => Date.now() + ahead });
      const dir = tempDir();
      const env = simEnv(sim);
      const file = writePlaybook(
        'version: 1\nname: w\nsettings: { rate_limit: 200/s, concurrency: 4, wait: true }\ntasks:\n  - { name: php, action: php.set_version, target: all, with: { php_version: "8.3" } }\n  - { name: ips, action: denied_ips.set, target: all, with: { ip_list: ["203.0.113.9"] } }\n',
        dir,
      );
      const report = join(dir, 'r.json');
      const run = startCli(['run', file, '--yes', '--report', report], env);
      const envs = sim.fleet.environments.size;
      // The run's own process starts first: seconds on a loaded machine.
      await waitFor(() => sim.log.filter((e) => e.status === 202 && e.method === 'PUT').length === envs, 40_000);
      run.child.kill('SIGINT');
      const { code, at } = await run.done;
      expect(code).toBe(130);
      // Nothing waits out an operation after Ctrl-C: the process was gone before the last one it started ended.
      expect(Math.max(...[...sim.operations.all.values()].map((op) => op.completeAt))).toBeGreaterThan(at);
      const interrupted = readReport(report);
      expect(interrupted.stopped?.kind).toBe('interrupted');
      const php = interrupted.results.filter((r) => r.task === 'php');
      expect(php.every((r) => r.status === 'accepted' || r.status === 'succeeded')).toBe(true);
      expect(php.filter((r) => r.status === 'accepted').length).toBeGreaterThan(0);
      expect(interrupted.results.filter((r) => r.task === 'ips').every((r) => r.status === 'skipped')).toBe(true);

      // status --wait finishes the accepted operations and writes them to the journal too.
      ahead = 60_000;
      const status = await runCli(['status', report, '--wait', '30s'], env);
      expect(status.code).toBe(130); // the report still says the run was interrupted
      const after = readReport(report);
      expect(after.results.filter((r) => r.task === 'php').every((r) => r.status === 'succeeded')).toBe(true);
      const journaled = readJournal(join(dir, 'r.journal.jsonl'));
      for (const r of after.results.filter((x) => x.task === 'php')) expect(journaled.results.get(r.step_id!)?.status).toBe('succeeded');

      // resume --wait sends what was never sent and follows it to the end.
      const resumed = await runCli(['resume', report, '--yes', '--wait'], env);
      expect(resumed.code).toBe(0);
      const done = readReport(report);
      expect(done.summary.succeeded).toBe(done.summary.total);
      // Nothing was sent to a busy environment, and no operation was polled once it was known done.
      const polls = sim.log.filter((e) => e.endpoint === 'getOperation');
      const operations = sim.log.filter((e) => e.status === 202 && e.method !== 'GET').length;
      expect(operations).toBe(envs); // the PHP changes; denied-IP lists are answered at once
      expect(polls.length / operations).toBeLessThan(4);
      expect(done.results.some((r) => /blocked/.test(r.reason ?? ''))).toBe(false);
    },
  );

  it('status --wait keeps its time limit against a rate-limited service, and SIGTERM keeps the answers already in', { timeout: 60_000 }, async () => {
    // Operations of up to a minute: when status is stopped, some have ended and the rest still run,
    // however long the machine took to get there (with 4 s, a loaded machine saw all of them end first).
    const { sim } = await start({ sites: 12, operationDelayMs: [200, 60_000] });
    const dir = tempDir();
    const env = simEnv(sim);
    const file = writePlaybook(
      'version: 1\nname: s\nsettings: { rate_limit: 500/s }\ntasks:\n  - { name: php, action: php.set_version, target: all, with: { php_version: "8.3" } }\n',
      dir,
    );
    const report = join(dir, 'r.json');
    expect((await runCli(['run', file, '--yes', '--report', report], env)).code).toBe(0);
    const accepted = readReport(report).summary.accepted;
    expect(accepted).toBe(sim.fleet.environments.size);

    // A limit the service keeps at 2 calls a second: the wait of 1 s is kept all the same.
    sim.setRate('2/s');
    const t0 = Date.now();
    const limited = await runCli(['status', report, '--wait', '1s', '--rate', '2/s'], env);
    expect(Date.now() - t0).toBeLessThan(4000);
    expect(limited.code).toBe(0);
    expect(limited.stdout).toMatch(/operations still running: look again with `sitefleet status .* --wait`/);

    // SIGTERM mid-wait: what was learned is in the report and the journal.
    sim.setRate(undefined);
    const before = sim.log.length;
    const done = () => sim.log.slice(before).filter((e) => e.endpoint === 'getOperation' && e.status === 200);
    // One operation has ended (status's first look answers it at once), the others still run.
    await waitFor(() => sim.operations.inProgress < accepted, 60_000);
    const watching = startCli(['status', report, '--wait', '60s'], env);
    // Stopped once an answer is in the journal: status is then past its start and watching the rest.
    const journal = join(dir, 'r.journal.jsonl');
    await waitFor(() => done().length > 0 && readFileSync(journal, 'utf8').includes('"t":"update"'), 40_000);
    watching.child.kill('SIGTERM');
    expect((await watching.done).code).toBe(130);
    const answered = new Set(sim.log.filter((e) => e.endpoint === 'getOperation' && e.status === 200).map((e) => e.operation_id));
    expect(done().length).toBeLessThan(accepted); // stopped mid-way
    const kept = readReport(report).results.filter((r) => r.status === 'succeeded');
    expect(kept.length).toBeGreaterThan(0);
    for (const r of kept) expect(answered.has(r.operation_id!)).toBe(true);
    expect(kept.length).toBe(answered.size);
  });
});
