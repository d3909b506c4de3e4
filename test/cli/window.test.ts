import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import type { Report } from '../../src/report/report.js';
import { closingAt } from '../../src/app/window.js';
import { journalPathFor } from '../../src/run/journal.js';
import type { SimLogEntry, Simulator } from '../../src/sim/server.js';
import { runCli, simEnv, tempDir, writePlaybook } from '../helpers/cli.js';
import { useSimulator } from '../helpers/sim.js';

const start = useSimulator();

const playbook = (settings: string) =>
  `version: 1\nname: themes\nsettings: { rate_limit: 20/s${settings} }\ntasks:\n  - { name: themes, action: themes.update, target: all, with: { skip_vulnerable_updates: false } }\n`;

/** Each write the simulator received, counted by path: a duplicate shows as a 2. */
const writesByPath = (sim: Simulator) => {
  const counts = new Map<string, number>();
  for (const e of sim.log.filter((l) => l.method !== 'GET' && l.status !== 429)) counts.set(e.path, (counts.get(e.path) ?? 0) + 1);
  return counts;
};
const hhmm = (ms: number) => new Date(ms).toISOString().slice(11, 16);
const read = (path: string) => JSON.parse(readFileSync(path, 'utf8')) as Report;

/** Every attempt the journal recorded (the moment before it was sent). */
const intents = (reportPath: string) =>
  readFileSync(journalPathFor(reportPath), 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as { t: string; at?: number })
    .filter((r) => r.t === 'intent');

/** Calls `act` once the simulator has answered the `nth` write (a moment chosen by what happened, never by the clock). */
function whenWritten(sim: Simulator, nth: number, act: () => void): void {
  let seen = 0;
  const push = sim.log.push.bind(sim.log);
  sim.log.push = (...entries: SimLogEntry[]) => {
    const length = push(...entries);
    for (const e of entries) if (e.method !== 'GET' && e.status !== 429 && ++seen === nth) queueMicrotask(act);
    return length;
  };
}

/**
 * This process's wall clock (Date.now: the run's deadline, its journal, the simulator), moved on when
 * told; timers keep real time. A deadline an hour away passes when the test says, however long a
 * loaded machine takes to plan.
 */
function movableWallClock() {
  const real = Date.now.bind(Date);
  let offset = 0;
  const spy = vi.spyOn(Date, 'now').mockImplementation(() => real() + offset);
  return { passTo: (at: number) => void (offset = Math.max(offset, at - real())), restore: () => spy.mockRestore() };
}

/** Runs `act` with this process's zone (TZ) set to `zone`, as a machine in it would: the zone `HH:MM` means. */
async function inZone<T>(zone: string, act: () => Promise<T>): Promise<T> {
  const before = process.env.TZ;
  process.env.TZ = zone;
  try {
    return await act();
  } finally {
    if (before === undefined) delete process.env.TZ;
    else process.env.TZ = before;
  }
}

/**
 * A run whose --not-after passes while it is still sending: the deadline is an hour away, and the
 * wall clock passes it once the simulator has answered the 6th write, so some are sent and some not.
 */
async function cutShort(sim: Simulator, dir: string, settings = '') {
  const file = writePlaybook(playbook(settings), dir);
  const reportPath = join(dir, 'r.json');
  const notAfter = Date.now() + 3_600_000;
  const clock = movableWallClock();
  try {
    whenWritten(sim, 6, () => clock.passTo(notAfter + 1000));
    const run = await runCli(
      ['run', file, '--yes', '--poll-interval', '50', '--report', reportPath, '--not-after', new Date(notAfter).toISOString()],
      simEnv(sim),
    );
    return { run, reportPath, notAfter };
  } finally {
    clock.restore();
  }
}

describe('maintenance windows', () => {
  it('--not-after passing mid-run: no write after it, unsent steps skipped "window closed", exit 5 with the resume command; resume sends the rest once', async () => {
    const { sim } = await start({ sites: 20, themes: 4, seed: 11, operationDelayMs: 100 });
    const dir = tempDir();
    // wait: operations accepted before the deadline are followed to their end after it.
    const { run, reportPath, notAfter } = await cutShort(sim, dir, ', wait: true');
    expect(run.code).toBe(5);
    const report = read(reportPath);
    const closed = report.results.filter((r) => r.reason?.startsWith('window closed: --not-after '));
    const sent = report.results.filter((r) => r.status === 'succeeded');
    expect(report.results.filter((r) => r.status === 'accepted')).toEqual([]);
    expect(closed.length).toBeGreaterThan(5);
    expect(sent.length).toBeGreaterThan(5);
    for (const r of closed) expect(r.status).toBe('skipped');
    expect(report.stopped?.kind).toBe('window');
    // A report whose window closed reads back (status, report --html): it once failed its own schema.
    const looked = await runCli(['status', reportPath], simEnv(sim));
    expect(looked.stderr).toBe('');
    expect(looked.code).toBe(5);
    expect(intents(reportPath).every((r) => r.at! <= notAfter)).toBe(true);
    expect(run.stdout).toContain(
      `${closed.length} steps were not sent before the window closed; send them in the next window with: sitefleet resume ${reportPath}`,
    );
    expect([...writesByPath(sim).values()].reduce((a, b) => a + b, 0)).toBe(sent.length);

    const resumed = await runCli(['resume', reportPath, '--yes', '--poll-interval', '50'], simEnv(sim));
    expect(resumed.code).toBe(0);
    const counts = writesByPath(sim);
    expect(counts.size).toBe(report.results.filter((r) => r.step_id !== null).length);
    expect([...counts.values()].every((n) => n === 1)).toBe(true);
  });

  it('settings.window: outside it exit 5 naming the window and nothing is read or sent; resume keeps to the window too', async () => {
    const { sim } = await start({ sites: 20, themes: 4, seed: 12, operationDelayMs: 100 });
    const now = Date.now();
    // Open now in UTC (no timezone: the machine's, TZ); nine hours east it is closed.
    const window = `, window: { start: "${hhmm(now - 3_600_000)}", end: "${hhmm(now + 7_200_000)}" }`;
    const dir = tempDir();
    const outside = await inZone('Asia/Tokyo', () => runCli(['run', writePlaybook(playbook(window), dir, 'tokyo.yaml'), '--yes'], simEnv(sim)));
    expect(outside.code).toBe(5);
    expect(outside.stderr).toMatch(
      /^sitefleet: outside settings\.window \d\d:\d\d–\d\d:\d\d Asia\/Tokyo: the next opens at \d{4}-\d\d-\d\d \d\d:\d\d Asia\/Tokyo \(in \d+h\d\dm\); start then, or add --wait-window to wait for it$/m,
    );
    expect(sim.log).toEqual([]);

    const { run, reportPath } = await inZone('UTC', () => cutShort(sim, dir, window));
    expect(run.code).toBe(5);
    expect(run.stdout).toMatch(/no write will be sent after .+ \(--not-after .+\), [\dhms]+ from now/);
    const before = sim.log.length;
    const elsewhere = await inZone('Asia/Tokyo', () => runCli(['resume', reportPath, '--yes', '--poll-interval', '50'], simEnv(sim)));
    expect(elsewhere.code).toBe(5);
    expect(elsewhere.stderr).toContain('outside settings.window');
    expect(sim.log.length).toBe(before);

    const resumed = await inZone('UTC', () => runCli(['resume', reportPath, '--yes', '--poll-interval', '50'], simEnv(sim)));
    expect(resumed.code).toBe(0);
    expect(resumed.stdout).toMatch(/no write will be sent after .+ \(settings\.window \d\d:\d\d–\d\d:\d\d UTC\)/);
    const counts = writesByPath(sim);
    expect(counts.size).toBe(read(reportPath).results.filter((r) => r.step_id !== null).length);
    expect([...counts.values()].every((n) => n === 1)).toBe(true);
    // Nothing left: a resume outside the window says so, and sends nothing.
    const done = sim.log.length;
    const after = await inZone('Asia/Tokyo', () => runCli(['resume', reportPath, '--yes', '--poll-interval', '50'], simEnv(sim)));
    expect(after.code).toBe(0);
    expect(after.stdout).toContain('nothing left to send: every step has ended.');
    expect(sim.log.length).toBe(done);
  });

  it('a window or --not-after that cannot be used is exit 2 naming it', async () => {
    const { sim } = await start({ sites: 4, themes: 3, seed: 5 });
    const dir = tempDir();
    const zone = await runCli(
      ['run', writePlaybook(playbook(', window: { start: "02:00", end: "05:00", timezone: Mars/Base }'), dir, 'a.yaml'), '--yes'],
      simEnv(sim),
    );
    expect(zone.code).toBe(2);
    expect(zone.stderr).toMatch(/a\.yaml:3:\d+: settings\.window\.timezone: "Mars\/Base" is not a time zone/);
    const hour = await runCli(['run', writePlaybook(playbook(', window: { start: "2:00", end: "05:00" }'), dir, 'b.yaml'), '--yes'], simEnv(sim));
    expect(hour.code).toBe(2);
    expect(hour.stderr).toMatch(/b\.yaml:3:\d+: settings\.window\.start/);
    const notAfter = await runCli(['run', writePlaybook(playbook(''), dir, 'c.yaml'), '--yes', '--not-after', 'tonight'], simEnv(sim));
    expect(notAfter.code).toBe(2);
    expect(notAfter.stderr).toContain('--not-after tonight: give a time as HH:MM');
    const passed = await runCli(['run', writePlaybook(playbook(''), dir, 'd.yaml'), '--yes', '--not-after', '2020-01-01T00:00Z'], simEnv(sim));
    expect(passed.code).toBe(5);
    expect(passed.stderr).toContain('has passed: nothing was sent');
    expect(sim.log).toEqual([]);
  });

  it('the closing signal aborts by itself as the deadline passes, with its reason; one passed aborts at once', async () => {
    // The run above passes its deadline by a moved clock, seen by the executor's own check; this is the timer that closes it on time.
    const reason = '--not-after 02:00 (2026-11-22 02:00 UTC) passed';
    const soon = closingAt({ at: Date.now() + 30, source: '--not-after 02:00', reason });
    expect(soon.signal!.aborted).toBe(false);
    await new Promise((resolve) => soon.signal!.addEventListener('abort', resolve, { once: true }));
    expect(soon.signal!.reason).toBe(reason);
    const passed = closingAt({ at: 1000, source: '--not-after 02:00', reason }, () => 2000);
    expect(passed.signal!.aborted).toBe(true);
    passed.dispose();
    soon.dispose();
    expect(closingAt(undefined).signal).toBeUndefined();
  });
});
