import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { learnFromJournal } from '../../src/run/history.js';
import { tempDir } from '../helpers/cli.js';

const result = (step: string, status: string) => ({
  step_id: step,
  status,
  http_status: 202,
  operation_id: `op-${step}`,
  attempts: 1,
  error: null,
  reason: null,
});

describe('learning operation times from an earlier run’s journal', () => {
  it('takes the operations at the end of each wave (earlier ones were seen late, behind the writes), per action', () => {
    const steps = Array.from({ length: 20 }, (_, i) => ({ id: `s${i}`, action: 'php.set_version', task_index: 0 }));
    const lines: unknown[] = [{ t: 'start', v: 1, run_id: 'r', playbook: 'p', report: 'r.json', started_at: '', plan: { steps } }];
    for (let i = 0; i < 20; i++) lines.push({ t: 'result', step: `s${i}`, result: result(`s${i}`, 'accepted'), at: i * 100 });
    // The first 18 are seen done once the writes are out (~20 s); the last two 4 and 5 s after theirs.
    for (let i = 0; i < 18; i++) lines.push({ t: 'update', step: `s${i}`, result: result(`s${i}`, 'succeeded'), at: 20_000 + i });
    lines.push({ t: 'update', step: 's18', result: result('s18', 'succeeded'), at: 1800 + 4000 });
    lines.push({ t: 'update', step: 's19', result: result('s19', 'failed'), at: 1900 + 5000 });
    lines.push('{"t":"upd'); // torn by a kill
    const file = join(tempDir(), 'r.journal.jsonl');
    writeFileSync(file, lines.map((l) => (typeof l === 'string' ? l : JSON.stringify(l))).join('\n'));
    const learned = learnFromJournal(file);
    expect(learned.operationMs.get('php.set_version')).toBe(5000);
    expect(learned.samples.get('php.set_version')).toBe(2);
  });

  it("a guarded wave: its restore points' backups learned apart from its writes, and how long the clear and look after a write took", () => {
    // One wave: ten backups accepted first, then ten writes; each write looked at after its operation.
    const steps = Array.from({ length: 10 }, (_, i) => [
      { id: `b${i}`, action: 'backups.create', task_index: 0, role: 'backup' },
      { id: `s${i}`, action: 'themes.update', task_index: 0, health: { url: 'https://example.com/' } },
    ]).flat();
    const lines: unknown[] = [{ t: 'start', v: 1, run_id: 'r', playbook: 'p', report: 'r.json', started_at: '', plan: { steps } }];
    for (let i = 0; i < 10; i++) {
      lines.push({ t: 'result', step: `b${i}`, result: result(`b${i}`, 'accepted'), at: i * 1000 });
      lines.push({ t: 'update', step: `b${i}`, result: result(`b${i}`, 'succeeded'), at: i * 1000 + 3000 });
    }
    for (let i = 0; i < 10; i++) {
      const at = 20_000 + i * 1000;
      lines.push({ t: 'result', step: `s${i}`, result: result(`s${i}`, 'accepted'), at });
      lines.push({ t: 'update', step: `s${i}`, result: result(`s${i}`, 'succeeded'), at: at + 2000 });
      const health = { url: 'https://example.com/', outcome: 'healthy', before: 'HTTP 200', after: 'HTTP 200' };
      lines.push({ t: 'update', step: `s${i}`, result: { ...result(`s${i}`, 'succeeded'), health }, at: at + 2000 + 1500 });
    }
    const file = join(tempDir(), 'g.journal.jsonl');
    writeFileSync(file, lines.map((l) => JSON.stringify(l)).join('\n'));
    const learned = learnFromJournal(file);
    expect(learned.operationMs.get('backups.create')).toBe(3000);
    expect(learned.operationMs.get('themes.update')).toBe(2000);
    expect(learned.afterMs.get('themes.update')).toBe(1500);
  });
});
