import { describe, expect, it } from 'vitest';
import { CALL_COSTS, countWave, POLLS_PER_OPERATION, slotsOf } from '../../src/plan/call-costs.js';
import type { Step, TaskSummary } from '../../src/plan/plan.js';

const step = (id: string, env: string, extra: Partial<Step> = {}): Step => ({
  id,
  task: 't',
  task_index: 0,
  action: 'backups.create',
  target: { env_id: env },
  endpoint: 'addManualBackup',
  method: 'POST',
  path: '/x',
  params: {},
  idempotent: false,
  ...extra,
});
const task = (extra: Partial<TaskSummary>): TaskSummary => ({
  index: 0,
  name: 't',
  action: 'php.set_version',
  matched: 2,
  steps: 4,
  skipped: 0,
  allow_empty: false,
  ...extra,
});

describe('the estimate counts the manual slots’ calls', () => {
  it('a guarded wave: each restore point reads its list first, and once judged is read for and removed (a DELETE and its poll)', () => {
    const steps = ['e1', 'e2'].flatMap((e) => [
      step(`b-${e}`, e, { role: 'backup' }),
      step(`w-${e}`, e, { action: 'php.set_version', endpoint: 'modifyPhpVersion', method: 'PUT', idempotent: true }),
    ]);
    const waits = countWave(task({ wait: true, backup_first: { tag: 'before' } }), steps);
    expect(waits).toMatchObject({ restorePoints: 2, slotReads: 4, slotDeletes: 2 });
    // Not waited for: nothing is judged, nothing removed after; the room's read stays.
    expect(countWave(task({ backup_first: { tag: 'before' } }), steps)).toMatchObject({ slotReads: 2, slotDeletes: 0 });
    const without = slotsOf({ ...waits, slotReads: 0, slotDeletes: 0 }).general;
    expect(slotsOf(waits).general - without).toBeCloseTo(4 * CALL_COSTS['slot read'].general + 2 * (1 + POLLS_PER_OPERATION));
  });

  it('backups.create: one read each for its room; with keep, one more read and the oldest of its series removed', () => {
    const steps = [step('a', 'e1'), step('b', 'e2'), step('c', 'e3')];
    const backups = task({ action: 'backups.create' });
    expect(countWave(backups, steps)).toMatchObject({ slotReads: 3, slotDeletes: 0 });
    expect(countWave({ ...backups, keep_backups: 2 }, steps)).toMatchObject({ slotReads: 6, slotDeletes: 3 });
    expect(slotsOf(countWave(backups, steps)).create).toBe(3);
  });
});
