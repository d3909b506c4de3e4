import { appendFileSync, lstatSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { Plan } from '../../src/plan/plan.js';
import { foldJournal, hasStartRecord, Journal, NoStartRecordError, readJournal, type JournalRecord } from '../../src/run/journal.js';
import { writeFileAtomic } from '../../src/util/atomic-write.js';
import { tempDir } from '../helpers/cli.js';

/** A start record as large as a big run's (the plan is in it): past the 64 KiB the tail is read in. */
function start(stepCount = 2000) {
  const plan = { steps: Array.from({ length: stepCount }, (_, i) => ({ id: `0:${i}`, note: 'x'.repeat(40) })), tasks: [] } as unknown as Plan;
  return { t: 'start', v: 1, run_id: 'r', playbook: 'p.yaml', report: 'r.json', started_at: '2026-11-22T00:00:00.000Z', plan } as const;
}

describe('journal', () => {
  it("folds a restore point's room records onto its result, however the two came in order, each removal once", () => {
    const room = { id: 600, tag: 'sitefleet-before-php-2026-10-20', why: 'room' as const };
    const answered = { step_id: '0:0', status: 'accepted' as const, http_status: 202, operation_id: 'op', attempts: 1, error: null, reason: null };
    const records: JournalRecord[] = [
      start(2),
      { t: 'room', step: '0:0', slots: { removed: [room], earlier: [5] }, at: 1 },
      { t: 'intent', step: '0:0', attempt: 1, at: 2 },
      // Written by a run that had not the room in memory (a resume): it names only what it removed itself.
      { t: 'result', step: '0:0', result: { ...answered, backup_slots: { removed: [{ id: 601, tag: 't', why: 'judged' }] } }, at: 3 },
      { t: 'room', step: '0:0', slots: { removed: [room] }, at: 4 },
      { t: 'room', step: '0:1', slots: { removed: [{ ...room, id: 700 }] }, at: 5 },
    ];
    const state = foldJournal(records);
    expect(state.results.get('0:0')?.backup_slots).toEqual({ removed: [{ id: 601, tag: 't', why: 'judged' }, room], earlier: [5] });
    // A step with no record yet keeps its room apart (resume puts it on the step's next record).
    expect(state.results.has('0:1')).toBe(false);
    expect(state.room.get('0:1')).toEqual({ removed: [{ ...room, id: 700 }] });
  });

  it('comes into being whole, and a second run cannot take the same name', async () => {
    const path = join(tempDir(), 'r.journal.jsonl');
    const { journal, replaced } = await Journal.create(path, start());
    expect(replaced).toBe(false);
    await journal.append({ t: 'end', at: 1 });
    await journal.close();
    expect(readJournal(path).ended).toBe(true);
    await expect(Journal.create(path, start())).rejects.toMatchObject({ code: 'EEXIST' });
    expect(readJournal(path).ended).toBe(true);
  });

  it('opening keeps a whole journal as it is, and cuts a torn last record so that appends stay readable', async () => {
    const path = join(tempDir(), 'r.journal.jsonl');
    const { journal } = await Journal.create(path, start());
    await journal.close();
    const whole = readFileSync(path, 'utf8');
    await (await Journal.open(path)).close();
    expect(readFileSync(path, 'utf8')).toBe(whole);

    appendFileSync(path, '{"t":"intent","step":"0:1","att');
    const reopened = await Journal.open(path);
    await reopened.append({ t: 'resume', at: 2 });
    await reopened.close();
    expect(readFileSync(path, 'utf8')).toBe(`${whole}{"t":"resume","at":2}\n`);
    expect(readJournal(path).resumes).toBe(1);
  });

  it('a journal without a complete start record belonged to a run that sent nothing: read says so, create replaces it', async () => {
    const dir = tempDir();
    for (const [name, content] of [
      ['empty', ''],
      ['torn', JSON.stringify(start()).slice(0, 70_000)],
    ] as const) {
      const path = join(dir, `${name}.journal.jsonl`);
      writeFileSync(path, content);
      expect(hasStartRecord(path)).toBe(false);
      expect(() => readJournal(path)).toThrow(NoStartRecordError);
      const { journal, replaced } = await Journal.create(path, start(3));
      await journal.close();
      expect(replaced).toBe(true);
      expect(readJournal(path).start.plan.steps).toHaveLength(3);
    }
  });

  it('reports are written through a temporary file: never through a symlink left at the path', () => {
    const dir = tempDir();
    const victim = join(dir, 'victim.txt');
    writeFileSync(victim, 'keep me');
    const path = join(dir, 'report.json');
    symlinkSync(victim, path);
    writeFileAtomic(path, '{"ok":true}\n', 0o600);
    expect(readFileSync(victim, 'utf8')).toBe('keep me');
    expect(lstatSync(path).isSymbolicLink()).toBe(false);
    expect(lstatSync(path).mode & 0o777).toBe(0o600);
    expect(readFileSync(path, 'utf8')).toBe('{"ok":true}\n');
  });
});
