import { describe, expect, it } from 'vitest';
import type { Backup } from '../../src/api/types.js';
import type { Plan, Step } from '../../src/plan/plan.js';
import type { JournalState } from '../../src/run/journal.js';
import { backupMismatch, chooseRestores } from '../../src/run/restore-choice.js';
import type { IsolationRound, StepResult } from '../../src/run/types.js';

const STARTED = '2026-11-24T02:00:00.000Z';
const TAG = (task: string) => `sitefleet-before-${task}-2026-11-24`;

/** A write to `env` by task `task`, guarded by its restore point. */
function guarded(task: number, env: string): Step[] {
  const target = { env_id: env, site: `site-${env}`, environment: 'live' };
  const base = { task: `t${task}`, task_index: task, target, params: { env_id: env }, lock: env };
  return [
    {
      ...base,
      id: `${task}:b:${env}`,
      action: 'backups.create',
      endpoint: 'addManualBackup',
      method: 'POST',
      path: `/x/${env}`,
      body: { tag: TAG(`t${task}`) },
      idempotent: false,
      role: 'backup',
    },
    {
      ...base,
      id: `${task}:${env}`,
      action: 'themes.update',
      endpoint: 'bulkUpdateThemes',
      method: 'PUT',
      path: `/y/${env}`,
      body: {},
      idempotent: true,
      backup_step: `${task}:b:${env}`,
      health: { url: `https://${env}.example/` },
    },
  ];
}

function failed(id: string, extra: Partial<StepResult>, backupId = 7): StepResult {
  return {
    step_id: id,
    status: 'failed',
    http_status: 200,
    operation_id: 'op',
    attempts: 1,
    error: null,
    reason: 'x',
    restore_point: { tag: 'tag', backup_id: backupId },
    ...extra,
  };
}

const BROKE = { health: { url: 'u', outcome: 'unhealthy' as const, before: 'HTTP 200', after: 'HTTP 500' } };

function stateOf(steps: Step[], results: StepResult[], tasks: unknown[] = []): JournalState {
  const plan = { steps, tasks, settings: {} } as unknown as Plan;
  return {
    start: { t: 'start', v: 1, run_id: 'r', playbook: 'p', report: 'r.json', started_at: STARTED, plan },
    results: new Map(results.map((r) => [r.step_id, r])),
    intents: new Map(),
    ended: true,
    resumes: 0,
    putBack: new Map(),
    room: new Map(),
  };
}

describe('which failed writes `sitefleet restore` puts back', () => {
  it('by default only a write that broke a site healthy before it; one refused or whose operation failed only when named', () => {
    const steps = [...guarded(0, 'a'), ...guarded(0, 'b'), ...guarded(0, 'c')];
    const state = stateOf(steps, [
      failed('0:a', BROKE),
      failed('0:b', { reason: 'operation failed: blocked' }),
      failed('0:c', { health: { url: 'u', outcome: 'unhealthy before', before: 'HTTP 500' } }),
    ]);
    expect(chooseRestores(state).todo.map((c) => c.step.id)).toEqual(['0:a']);
    // The refused write goes unsaid (it broke nothing); the site broken before is said, and asks nothing of anyone.
    expect(chooseRestores(state).left.map((l) => [l.step.id, l.attention])).toEqual([['0:c', false]]);
    const named = chooseRestores(state, ['0:b', '0:c', '0:b:a', 'nope']);
    expect(named.todo.map((c) => c.step.id)).toEqual(['0:b']);
    expect(named.left.map((l) => [l.step.id, l.why])).toEqual([
      ['0:b:a', 'a restore point, not a write: name the write it guards'],
      ['nope', 'no step of this run has that id'],
      ['0:c', 'its site was broken before the write'],
    ]);
  });

  it('one restore per environment: two tasks that broke it restore the earliest restore point only', () => {
    const steps = [...guarded(0, 'a'), ...guarded(1, 'a')];
    const choice = chooseRestores(stateOf(steps, [failed('0:a', BROKE, 7), failed('1:a', BROKE, 8)]));
    expect(choice.todo.map((c) => [c.step.id, c.backupId, c.tag])).toEqual([['0:a', 7, TAG('t0')]]);
    expect(choice.left).toEqual([expect.objectContaining({ why: 'its environment is restored from an earlier restore point of this run', attention: false })]);
  });

  it('a restore done, in question or broken again is not sent; the ones that leave a site broken ask for attention', () => {
    const steps = [...guarded(0, 'a'), ...guarded(0, 'b'), ...guarded(0, 'c'), ...guarded(0, 'd')];
    const restored = (status: 'succeeded' | 'unknown' | 'sending' | 'accepted', health?: 'healthy' | 'unhealthy') => ({
      restored: { backup_id: 7, operation_id: status === 'accepted' ? 'op-r' : null, status, ...(health ? { health: { outcome: health } } : {}) },
    });
    const choice = chooseRestores(
      stateOf(steps, [
        failed('0:a', { ...BROKE, ...restored('succeeded', 'healthy') }),
        failed('0:b', { ...BROKE, ...restored('sending') }),
        failed('0:c', { ...BROKE, ...restored('succeeded', 'unhealthy') }),
        failed('0:d', { ...BROKE, ...restored('accepted') }),
      ]),
    );
    expect(choice.todo).toEqual([]);
    expect(choice.follow.map((c) => c.step.id)).toEqual(['0:d']);
    expect(choice.inQuestion.map((c) => [c.step.id, c.result.restored?.status])).toEqual([['0:b', 'unknown']]);
    expect(choice.left.map((l) => [l.step.id, l.attention])).toEqual([
      ['0:a', false],
      ['0:b', true],
      ['0:c', true],
    ]);
  });
});

describe('a life a halt cut short is resume\u2019s to finish, never restored from the first restore point', () => {
  it('following, not looked at, isolating: left, saying resume finishes it; attention unless the site was last seen healthy', () => {
    const task = { index: 0, name: 't0', health: { url: 'u', on_broken: 'isolate' }, wait: true };
    const steps = ['a', 'b', 'c', 'd', 'e'].flatMap((env) => guarded(0, env));
    const restoredHealthy = { restored: { backup_id: 7, operation_id: 'r', status: 'succeeded' as const, health: { outcome: 'healthy' as const } } };
    const isolating = (round: IsolationRound): Partial<StepResult> => ({
      ...BROKE,
      ...restoredHealthy,
      isolation: { updates: [], rounds: [round], outcome: 'isolating', culprits: [], restores: 1 },
    });
    const choice = chooseRestores(
      stateOf(
        steps,
        [
          { ...failed('0:a', {}), status: 'accepted', restore_point: { tag: 't', backup_id: 7 } },
          { ...failed('0:b', {}), status: 'held', held: { code: 'not_looked', url: 'u', detail: 'halt', override: 'resume' } },
          failed('0:c', isolating({ names: ['p0'], status: 'broken', restore_point: { tag: 't', backup_id: 8 } })),
          failed('0:d', isolating({ names: ['p0'], status: 'healthy', restore_point: { tag: 't', backup_id: 8 } })),
          failed('0:e', BROKE),
        ] as StepResult[],
        [task],
      ),
    );
    expect(choice.todo.map((c) => c.step.id)).toEqual(['0:e']);
    expect(choice.left.map((l) => [l.step.id, l.attention])).toEqual([
      ['0:a', true],
      ['0:b', true],
      ['0:c', true],
      ['0:d', false],
    ]);
    for (const l of choice.left) expect(l.why).toContain('`sitefleet resume` of this report finishes its life');
  });
});

describe('a write put back by its items\u2019 own files', () => {
  it('healthy again: never restored from its backup (that would lose what the site did since)', () => {
    const steps = [...guarded(0, 'a'), ...guarded(0, 'b')];
    const byItems = (outcome: 'healthy' | 'unhealthy') =>
      ({ undone: { status: 'succeeded', commands: [], health: { outcome } } }) as unknown as Partial<StepResult>;
    const choice = chooseRestores(stateOf(steps, [failed('0:a', { ...BROKE, ...byItems('healthy') }), failed('0:b', { ...BROKE, ...byItems('unhealthy') })]));
    expect(choice.todo.map((c) => c.step.id)).toEqual(['0:b']);
    expect(choice.left.map((l) => [l.step.id, l.attention])).toEqual([['0:a', false]]);
  });
});

describe('the backup a restore may use', () => {
  const candidate = { step: guarded(0, 'a')[1]!, result: failed('0:a', BROKE), backupId: 7, tag: TAG('t0') };
  const backup = (b: Partial<Backup>): Backup => ({ id: 7, name: 'manual-7', note: TAG('t0'), type: 'manual', created_at: Date.parse(STARTED) + 5000, ...b });

  it('is the run’s own: listed, manual, tagged as its restore point, made after the run started (seconds or ms)', () => {
    expect(backupMismatch(candidate, [backup({})], STARTED)).toBeUndefined();
    expect(backupMismatch(candidate, [backup({ created_at: (Date.parse(STARTED) + 5000) / 1000 })], STARTED)).toBeUndefined();
    expect(backupMismatch(candidate, [], STARTED)).toMatch(/no longer in the environment's backup list/);
    expect(backupMismatch(candidate, [backup({ note: 'before launch', name: 'manual-7' })], STARTED)).toMatch(/not this run's restore point/);
    expect(backupMismatch(candidate, [backup({ type: 'scheduled' })], STARTED)).toMatch(/not a manual backup/);
    // A same-day run before this one took a backup with the very same tag.
    expect(backupMismatch(candidate, [backup({ created_at: Date.parse(STARTED) - 3_600_000 })], STARTED)).toMatch(/older than this run/);
  });
});
