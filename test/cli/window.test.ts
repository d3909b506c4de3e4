import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { Report } from '../../src/report/report.js';
import { journalPathFor } from '../../src/run/journal.js';
import type { Simulator } from '../../src/sim/server.js';
import { runCli, runCliProcess, simEnv, tempDir, writePlaybook } from '../helpers/cli.js';
import { useSimulator } from '../helpers/sim.js';

const start = useSimulator();

const playbook = (settings: string) =>
  `version: 1\nname: themes\nsettings: { rate_limit: 4/s${settings} }\ntasks:\n  - { name: themes, action: themes.update, target: all, with: { skip_vulnerable_updates: false } }\n`;

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

/**
 * A run whose --not-after passes while it is still sending: 80-odd writes at 4/s take 21 s, and the
 * deadline is 12 s away, so however long a loaded machine takes to plan (over 6 s in a full suite on
 * two cores), some are sent and some not.
 */
async function cutShort(sim: Simulator, dir: string, settings = '', env: Record<string, string> = {}) {
  const file = writePlaybook(playbook(settings), dir);
  const reportPath = join(dir, 'r.json');
  // The CLI's modules are loaded first (the first command of a test file loads them: seconds on a loaded machine), then the clock starts.
  expect((await runCli(['validate', file], { ...simEnv(sim), ...env })).code).toBe(0);
  const notAfter = Date.now() + 12_000;
  // A zone of its own is the process's (TZ): such a run gets a process of its own.
  const run = await (env.TZ ? runCliProcess : runCli)(['run', file, '--yes', '--report', reportPath, '--not-after', new Date(notAfter).toISOString()], {
    ...simEnv(sim),
    ...env,
  });
  return { run, reportPath, notAfter };
}

describe('maintenance windows', () => {
  it(
    '--not-after passing mid-run: no write after it, unsent steps skipped "window closed", exit 5 with the resume command; resume sends the rest once',
    { timeout: 120_000 },
    async () => {
      const { sim } = await start({ sites: 90, themes: 4, seed: 11, operationDelayMs: 100 });
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

      const resumed = await runCli(['resume', reportPath, '--yes'], simEnv(sim));
      expect(resumed.code).toBe(0);
      const counts = writesByPath(sim);
      expect(counts.size).toBe(report.results.filter((r) => r.step_id !== null).length);
      expect([...counts.values()].every((n) => n === 1)).toBe(true);
    },
  );

  it('settings.window: outside it exit 5 naming the window and nothing is read or sent; resume keeps to the window too', async () => {
    const { sim } = await start({ sites: 90, themes: 4, seed: 12, operationDelayMs: 100 });
    const now = Date.now();
    // Open now in UTC (no timezone: the machine's, TZ); nine hours east it is closed.
    const window = `, window: { start: "${hhmm(now - 3_600_000)}", end: "${hhmm(now + 7_200_000)}" }`;
    const dir = tempDir();
    const outside = await runCliProcess(['run', writePlaybook(playbook(window), dir, 'tokyo.yaml'), '--yes'], { ...simEnv(sim), TZ: 'Asia/Tokyo' });
    expect(outside.code).toBe(5);
    expect(outside.stderr).toMatch(
      /^sitefleet: outside settings\.window \d\d:\d\d–\d\d:\d\d Asia\/Tokyo: the next opens at \d{4}-\d\d-\d\d \d\d:\d\d Asia\/Tokyo \(in \d+h\d\dm\); start then, or add --wait-window to wait for it$/m,
    );
    expect(sim.log).toEqual([]);

    const { run, reportPath } = await cutShort(sim, dir, window, { TZ: 'UTC' });
    expect(run.code).toBe(5);
    // Its 6 s may be spent before the process got to plan on a loaded machine (then "-5s from now", every step skipped): the window is what is tested.
    expect(run.stdout).toMatch(/no write will be sent after .+ \(--not-after .+\), -?\d+s from now/);
    const before = sim.log.length;
    const elsewhere = await runCliProcess(['resume', reportPath, '--yes'], { ...simEnv(sim), TZ: 'Asia/Tokyo' });
    expect(elsewhere.code).toBe(5);
    expect(elsewhere.stderr).toContain('outside settings.window');
    expect(sim.log.length).toBe(before);

    const resumed = await runCliProcess(['resume', reportPath, '--yes'], { ...simEnv(sim), TZ: 'UTC' });
    expect(resumed.code).toBe(0);
    expect(resumed.stdout).toMatch(/no write will be sent after .+ \(settings\.window \d\d:\d\d–\d\d:\d\d UTC\)/);
    const counts = writesByPath(sim);
    expect(counts.size).toBe(read(reportPath).results.filter((r) => r.step_id !== null).length);
    expect([...counts.values()].every((n) => n === 1)).toBe(true);
    // Nothing left: a resume outside the window says so, and sends nothing.
    const done = sim.log.length;
    const after = await runCliProcess(['resume', reportPath, '--yes'], { ...simEnv(sim), TZ: 'Asia/Tokyo' });
    expect(after.code).toBe(0);
    expect(after.stdout).toContain('nothing left to send: every step has ended.');
    expect(sim.log.length).toBe(done);
    // Five processes of the CLI one after another, each started cold: on a loaded 2-core machine they take far more than the default 30 s.
  }, 90_000);

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
});
