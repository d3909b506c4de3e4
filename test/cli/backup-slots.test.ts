import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { Report } from '../../src/report/report.js';
import type { SimEnvironment } from '../../src/sim/fleet.js';
import type { Simulator } from '../../src/sim/server.js';
import { journalPathFor, readJournal } from '../../src/run/journal.js';
import { heldPages } from '../helpers/held-pages.js';
import { whenSeen } from '../helpers/sim-events.js';
import { runCli, simEnv, startCli, startCliInProcess, tempDir, writePlaybook } from '../helpers/cli.js';
import { useSimulator, waitFor } from '../helpers/sim.js';

const start = useSimulator();
const DAY = 86_400_000;
const NIGHT_ONE = Date.parse('2026-11-01T02:00:00Z');

/** A real-profile simulator (five manual backups an environment) with one live environment holding `people` backups a person took. */
async function fleet(people: number) {
  const { sim } = await start({ profile: 'real', sites: 1, seed: 4, operationDelayMs: 30, operationVisibleAfterMs: 0, createRate: '100/s' });
  const live = [...sim.fleet.environments.values()].find((e) => e.displayName === 'live')!;
  const others = live.backups.filter((b) => b.type !== 'manual');
  live.backups = [
    ...others,
    ...Array.from({ length: people }, (_, i) => ({
      id: 500 + i,
      name: `m-${i}`,
      note: `before the shop move ${i}`,
      type: 'manual',
      created_at: NIGHT_ONE - DAY * (30 - i),
    })),
  ];
  for (const b of live.backups) if (b.id >= 500) sim.fleet.backupStates.set(b.id, sim.fleet.backupStates.values().next().value!);
  return { sim, live, person: live.backups.filter((b) => b.type === 'manual').map((b) => b.id) };
}

/** A guarded PHP change (its restore point first) and the nightly backup that keeps its newest one. */
function playbook(night: number, nightlyWaits = false): string {
  return writePlaybook(`version: 1
name: nights
settings: { manual_backup_slots: 5 }
tasks:
  - name: php
    action: php.set_version
    target: { environment: live }
    with: { php_version: "${night % 2 === 0 ? '8.2' : '8.3'}" }
    backup_first: true
  - name: nightly
    action: backups.create
    target: { environment: live }
    with: { tag: "nightly-{{date}}", keep: 1 }
${nightlyWaits ? '    wait: true\n' : ''}`);
}

async function night(sim: Simulator, n: number, nightlyWaits = false): Promise<{ code: number | null; out: string; report: Report }> {
  // A day apart: the night before's backup (not waited for) has ended, as the real service's would
  // have; one still being made would take a sixth slot no list shows yet, and the service refuses it.
  await waitFor(() => [...sim.operations.all.values()].every((op) => op.completeAt <= Date.now()));
  const path = join(tempDir(), 'r.json');
  const res = await runCli(['run', playbook(n, nightlyWaits), '--yes', '--poll-interval', '20', '--report', path], simEnv(sim), {
    now: () => NIGHT_ONE + n * DAY,
  });
  return { code: res.code, out: res.stdout + res.stderr, report: JSON.parse(readFileSync(path, 'utf8')) as Report };
}

/** Two restore points earlier nights left (600 the older): with three of a person's, the five slots are full. */
function olderPoints(sim: Simulator, live: SimEnvironment): void {
  const state = sim.fleet.backupStates.values().next().value!;
  for (const [i, id] of [600, 601].entries()) {
    live.backups.push({ id, name: `s-${i}`, note: `sitefleet-before-php-2026-10-2${i}`, type: 'manual', created_at: NIGHT_ONE - DAY * (10 - i) });
    sim.fleet.backupStates.set(id, state);
  }
}

const manual = (sim: Simulator, env: string) => sim.fleet.environments.get(env)!.backups.filter((b) => b.type === 'manual');

describe('manual backup slots over nights (issue 55, item 1)', () => {
  it('ten nights of a guarded write and a nightly backup, three backups a person took: a restore point of its own every night, never more than five', async () => {
    const { sim, live, person } = await fleet(3);
    const most: number[] = [];
    for (let n = 0; n < 10; n++) {
      const before = new Set(manual(sim, live.id).map((b) => b.id));
      const { code, out, report } = await night(sim, n);
      expect(code, `night ${n + 1}: ${out}`).toBe(0);
      const write = report.results.find((r) => r.task === 'php' && r.role !== 'backup')!;
      expect(write.status, `night ${n + 1}`).toBe('succeeded');
      // Its own: made tonight, not one an earlier night left.
      expect(write.restore_point?.backup_id).not.toBeNull();
      expect(before.has(write.restore_point!.backup_id!), `night ${n + 1}: an earlier backup as its restore point`).toBe(false);
      most.push(manual(sim, live.id).length);
      expect(manual(sim, live.id).map((b) => b.id)).toEqual(expect.arrayContaining(person));
    }
    // Refused never (the service would have answered 400), removed only what sitefleet made.
    expect(sim.log.filter((e) => e.endpoint === 'addManualBackup' && e.status >= 400)).toEqual([]);
    const removed = sim.log.filter((e) => e.endpoint === 'deleteBackup').map((e) => Number(e.path.split('/').at(-1)));
    expect(removed.some((id) => person.includes(id))).toBe(false);
    expect(Math.max(...most)).toBeLessThanOrEqual(5);
    // Each night's restore point went once judged healthy; the nightly task keeps its newest one.
    expect(manual(sim, live.id).map((b) => b.note)).toEqual([...person.map((_, i) => `before the shop move ${i}`), expect.stringMatching(/^nightly-/)]);
  });

  it('the backups a step removed to make room, those judged and those kept are journaled on its record and in the report', async () => {
    const { sim, live } = await fleet(3);
    olderPoints(sim, live);
    const { code, out, report } = await night(sim, 0, true);
    expect(code, out).toBe(0);
    const point = report.results.find((r) => r.task === 'php' && r.role === 'backup')!;
    const own = point.restore_point!.backup_id!;
    // The oldest of sitefleet's went to make room; the rest of its series, and its own restore point, once its write was judged healthy.
    expect(point.backup_slots).toEqual({
      removed: [
        { id: 600, tag: 'sitefleet-before-php-2026-10-20', why: 'room' },
        { id: 601, tag: 'sitefleet-before-php-2026-10-21', why: 'judged' },
        { id: own, tag: point.restore_point!.tag, why: 'judged' },
      ],
    });
    const nightly = report.results.find((r) => r.task === 'nightly')!;
    const kept = manual(sim, live.id).filter((b) => b.note.startsWith('nightly-'));
    expect(kept).toHaveLength(1);
    expect(nightly.backup_slots).toEqual({ removed: [], kept: kept.map((b) => b.id) });
    const removed = sim.log.filter((e) => e.endpoint === 'deleteBackup').map((e) => Number(e.path.split('/').at(-1)));
    expect(removed.sort()).toEqual([600, 601, own].sort());
  });

  it('a run killed before its task ended still names the backup it removed to make room, and its resume keeps it in the report', async () => {
    const { sim, live } = await fleet(3);
    olderPoints(sim, live);
    // The look after the write waits: the task cannot end (where its removals were journaled before) until the kill.
    const pages = await heldPages(sim, 'modifyPhpVersion');
    const report = join(tempDir(), 'r.json');
    const args = ['--yes', '--poll-interval', '20', '--health-url', pages.url];
    const running = startCli(['run', playbook(0), ...args, '--report', report], simEnv(sim));
    await waitFor(() => sim.log.some((e) => e.endpoint === 'modifyPhpVersion'), 20_000);
    running.child.kill('SIGKILL');
    expect((await running.done).signal).toBe('SIGKILL');
    expect(sim.log.filter((e) => e.endpoint === 'deleteBackup').map((e) => e.path.split('/').at(-1))).toEqual(['600']);
    const room = { id: 600, tag: 'sitefleet-before-php-2026-10-20', why: 'room' };
    const cut = readJournal(journalPathFor(report));
    const backupStep = cut.start.plan.steps.find((s) => s.task === 'php' && s.role === 'backup')!;
    expect(cut.results.get(backupStep.id)?.backup_slots?.removed).toEqual([room]);
    pages.release();
    const resumed = await runCli(['resume', report, ...args], simEnv(sim));
    expect(resumed.code, resumed.stdout + resumed.stderr).toBe(0);
    const point = (JSON.parse(readFileSync(report, 'utf8')) as Report).results.find((r) => r.step_id === backupStep.id)!;
    expect(point.backup_slots?.removed).toEqual([room, expect.objectContaining({ id: 601, why: 'judged' }), expect.objectContaining({ why: 'judged' })]);
  });

  it('a run killed as its restore point was answered (room made, the backup perhaps unrecorded) still names the removal, and its resume keeps it', async () => {
    const { sim, live } = await fleet(3);
    olderPoints(sim, live);
    const report = join(tempDir(), 'r.json');
    const running = startCli(['run', playbook(0), '--yes', '--poll-interval', '20', '--report', report], simEnv(sim));
    // Killed the moment the service answers the backup (its answer on its way): the room was made before it was asked for.
    whenSeen(
      sim,
      () => sim.log.some((e) => e.endpoint === 'addManualBackup'),
      () => running.child.kill('SIGKILL'),
    );
    expect((await running.done).signal).toBe('SIGKILL');
    const room = { id: 600, tag: 'sitefleet-before-php-2026-10-20', why: 'room' };
    const lines = readFileSync(journalPathFor(report), 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { t: string; slots?: unknown });
    expect(lines.filter((r) => r.t === 'room').map((r) => r.slots)).toEqual([{ removed: [room] }]);
    const resumed = await runCli(['resume', report, '--yes', '--poll-interval', '20'], simEnv(sim));
    const point = (JSON.parse(readFileSync(report, 'utf8')) as Report).results.find((r) => r.task === 'php' && r.role === 'backup')!;
    expect(point.backup_slots?.removed, resumed.stdout + resumed.stderr).toEqual(expect.arrayContaining([room]));
  });

  it('a run stopped while it made room (its backup never sent) keeps the removal through a resume that sends the backup', async () => {
    const { sim, live } = await fleet(3);
    olderPoints(sim, live);
    const report = join(tempDir(), 'r.json');
    const args = ['--yes', '--poll-interval', '20'];
    const started = await startCliInProcess(['run', playbook(0), ...args, '--report', report], simEnv(sim));
    // Ctrl-C as the room's removal is asked for: the run stops, and the backup it made room for is not sent.
    whenSeen(sim, () => sim.log.some((e) => e.endpoint === 'deleteBackup'), started.interrupt);
    const stopped = await started.done;
    expect(stopped.code, stopped.stdout + stopped.stderr).toBe(130);
    expect(sim.log.filter((e) => e.endpoint === 'addManualBackup')).toEqual([]);
    const room = { id: 600, tag: 'sitefleet-before-php-2026-10-20', why: 'room' };
    const resumed = await runCli(['resume', report, ...args], simEnv(sim));
    expect(resumed.code, resumed.stdout + resumed.stderr).toBe(0);
    const point = (JSON.parse(readFileSync(report, 'utf8')) as Report).results.find((r) => r.task === 'php' && r.role === 'backup')!;
    expect(point.status).toBe('succeeded');
    expect(point.backup_slots?.removed).toEqual(expect.arrayContaining([room]));
  });

  it('a dry run names the backups it would remove to make room where the plan read the list, and says what may go where it did not', async () => {
    const { sim, live } = await fleet(4);
    live.backups.push({ id: 600, name: 's', note: 'sitefleet-before-php-2026-10-20', type: 'manual', created_at: NIGHT_ONE - DAY });
    sim.fleet.backupStates.set(600, sim.fleet.backupStates.values().next().value!);
    const known = writePlaybook(
      `version: 1\nname: b\ntasks:\n  - name: nightly\n    action: backups.create\n    target: { environment: live }\n    with: { tag: "nightly-{{date}}", unless_exists: true }\n`,
    );
    const dry = await runCli(['run', known, '--dry-run'], simEnv(sim));
    expect(dry.code, dry.stdout + dry.stderr).toBe(0);
    expect(dry.stdout).toMatch(/manual backups: would remove backup 600 \(sitefleet-before-php-2026-10-20\) on \S+ to make room for nightly-/);
    const unread = await runCli(['run', playbook(0), '--dry-run'], simEnv(sim));
    expect(unread.stdout).toContain(
      "manual backups: 2 may each remove the oldest backup sitefleet made on its environment when the environment's 5 slots are full (its list is read before each; never a person's)",
    );
    expect(sim.log.filter((e) => e.method !== 'GET')).toEqual([]);
  });

  it("every slot a person's: the backup and its write are held (no_backup_slot), nothing is sent, exit 1 with a line saying what to do", async () => {
    const { sim, live } = await fleet(5);
    const { code, out, report } = await night(sim, 0);
    expect(code).toBe(1);
    const php = report.results.filter((r) => r.task === 'php');
    expect(php.map((r) => [r.status, r.held?.code])).toEqual([
      ['held', 'no_backup_slot'],
      ['held', 'no_backup_slot'],
    ]);
    expect(out).toMatch(/no_backup_slot: .*live holds 5 manual backups/);
    expect(out).toMatch(/remove one of the manual backups of .*live/);
    expect(sim.log.filter((e) => e.method !== 'GET')).toEqual([]);
    expect(manual(sim, live.id)).toHaveLength(5);
  });
});
