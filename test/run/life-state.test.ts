import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { LIFE, lifeAt, next, roundAt, type LifeState } from '../../src/run/life/state.js';
import type { Step, TaskSummary } from '../../src/plan/plan.js';
import type { DatabaseRun, IsolationRound, StepResult } from '../../src/run/types.js';

const STATES: LifeState[] = [
  'waiting',
  'looking_before',
  'sending',
  'following',
  'updating_database',
  'clearing',
  'looking_after',
  'reading_back',
  'undoing',
  'restoring',
  'isolating',
  'ended',
];

/** States one move away, by the table. */
function after(state: LifeState): LifeState[] {
  return LIFE.filter((t) => t.from === state).map((t) => t.to);
}

function reachable(from: LifeState): Set<LifeState> {
  const seen = new Set<LifeState>([from]);
  const todo = [from];
  while (todo.length) for (const to of after(todo.pop()!)) if (!seen.has(to) && seen.add(to)) todo.push(to);
  return seen;
}

describe('the life of a write, as a table', () => {
  it('docs/development.md holds the same table as the code', () => {
    const docs = readFileSync(new URL('../../docs/development.md', import.meta.url), 'utf8');
    const rows = [...docs.matchAll(/^\| (\w+) \| (.+?) \| (\w+)(?: \((\w+)\))? \|$/gm)].filter((m) => m[1] !== 'from');
    expect(rows.map((m) => ({ from: m[1], on: m[2], to: m[3], ...(m[4] ? { status: m[4] } : {}) }))).toEqual(LIFE.map((t) => ({ ...t })));
  });

  it('every state is reached from waiting, every one reaches ended, and ended is the only end', () => {
    expect([...reachable('waiting')].sort()).toEqual([...STATES].sort());
    for (const state of STATES) expect(reachable(state).has('ended'), state).toBe(true);
    expect(after('ended')).toEqual([]);
    for (const t of LIFE) expect(t.to === 'ended', `${t.from} → ${t.to} on ${t.on}`).toBe(t.status !== undefined);
  });

  it('a move the table has no row for is refused, never guessed', () => {
    expect(next('following', 'operation failed')).toMatchObject({ to: 'ended', status: 'failed' });
    expect(() => next('ended', 'operation failed')).toThrow(/no move from ended/);
    expect(() => next('isolating', 'healthy, pages as before')).toThrow(/no move from isolating/);
    // Put back by its items and still broken: the backup next; healthy again: ended, no restore.
    expect(next('undoing', 'not put back by its items, or still broken').to).toBe('restoring');
    expect(next('undoing', 'put back by its items, healthy again')).toMatchObject({ to: 'ended', status: 'failed' });
    expect(next('undoing', 'put back by its items, healthy again, on_broken: isolate').to).toBe('isolating');
  });
});

const guarded = {
  index: 0,
  name: 't',
  action: 'plugins.update',
  wait: true,
  health: { url: 'https://{{domain}}/', on_broken: 'isolate' },
} as unknown as TaskSummary;
const step = {
  id: 's',
  task_index: 0,
  action: 'plugins.update',
  target: { env_id: 'e', domain: 'a.example' },
  updates: [{ plugin: 'p0' }],
  health: { url: 'https://a.example/' },
} as unknown as Step;
const base: StepResult = { step_id: 's', status: 'succeeded', http_status: 202, operation_id: 'op', attempts: 1, error: null, reason: null };

describe('lifeAt: where a journaled life stands, for resume', () => {
  const cases: [string, StepResult, LifeState][] = [
    [
      'its items being put back by their own files when a halt came',
      {
        ...base,
        status: 'failed',
        undone: {
          status: 'sending',
          commands: [
            { kind: 'plugin', name: 'p0', version: '1.0.0', wp_command: 'wp plugin install p0 --version=1.0.0 --force', status: 'sending', operation_id: null },
          ],
        },
      },
      'undoing',
    ],
    [
      'put back by its items, healthy again, on_broken: isolate: its rounds are due',
      { ...base, status: 'failed', undone: { status: 'succeeded', commands: [], health: { outcome: 'healthy' } } },
      'isolating',
    ],
    [
      'put back by its items, still broken, restored',
      {
        ...base,
        status: 'failed',
        undone: { status: 'succeeded', commands: [], health: { outcome: 'unhealthy' } },
        restored: { backup_id: 1, operation_id: 'r', status: 'failed' },
      },
      'ended',
    ],
    ['a restore accepted, not seen to end', { ...base, status: 'failed', restored: { backup_id: 1, operation_id: 'r', status: 'accepted' } }, 'restoring'],
    [
      'isolation under way',
      { ...base, status: 'failed', isolation: { updates: [], rounds: [], outcome: 'isolating', culprits: [], restores: 1 } },
      'isolating',
    ],
    [
      'restored healthy, isolation never begun',
      { ...base, status: 'failed', restored: { backup_id: 1, operation_id: 'r', status: 'succeeded', health: { outcome: 'healthy' } } },
      'isolating',
    ],
    ['accepted, its task waits', { ...base, status: 'accepted' }, 'following'],
    ['succeeded, never looked at', base, 'looking_after'],
    ['held by a halt before its look', { ...base, status: 'held', held: { code: 'not_looked', url: 'u', detail: 'd', override: 'o' } }, 'looking_after'],
    ['looked at and healthy', { ...base, health: { url: 'u', outcome: 'healthy' } }, 'ended'],
    ['isolation ended', { ...base, status: 'failed', isolation: { updates: [], rounds: [], outcome: 'found', culprits: [], restores: 2 } }, 'ended'],
    ['failed at once', { ...base, status: 'failed', operation_id: null }, 'ended'],
    ['a restore a halt kept from leaving', { ...base, status: 'failed', restored: { backup_id: 1, operation_id: null, status: 'not sent' } }, 'restoring'],
    [
      'a restore a halt kept from leaving, the site healthy again at resume',
      {
        ...base,
        status: 'failed',
        restored: { backup_id: 1, operation_id: null, status: 'not sent', health: { outcome: 'healthy', detail: 'healthy again at resume' } },
      },
      'ended',
    ],
    [
      'broken, its restore kept from leaving by a halt',
      { ...base, status: 'failed', restored: { backup_id: 1, operation_id: null, status: 'not sent', reason: 'the run was interrupted first' } },
      'restoring',
    ],
    [
      'broken, no restore point to send',
      {
        ...base,
        status: 'failed',
        restored: { backup_id: null, operation_id: null, status: 'not sent', reason: 'the backup list did not show the restore point' },
      },
      'ended',
    ],
  ];
  it.each(cases)('%s', (_, known, state) => expect(lifeAt(guarded, step, known)).toBe(state));

  it('an unguarded task has no look left to take', () => {
    expect(lifeAt({ ...guarded, health: undefined }, step, base)).toBe('ended');
  });

  it('a database step journaled under way (sending, accepted, not sent) is taken on, guarded or not; an ended one is not', () => {
    const db = (status: DatabaseRun['status']): StepResult => ({
      ...base,
      database: [{ command: 'wp core update-db', after: 'update', status, operation_id: status === 'accepted' ? 'op2' : null }],
    });
    const core = { ...guarded, action: 'core.update', health: undefined };
    for (const status of ['sending', 'accepted', 'not sent'] as const) {
      expect(lifeAt(core, step, db(status)), status).toBe('updating_database');
      expect(lifeAt(guarded, step, db(status)), status).toBe('updating_database');
    }
    expect(lifeAt(core, step, db('succeeded'))).toBe('ended');
    expect(lifeAt(core, step, db('failed'))).toBe('ended');
    expect(lifeAt(guarded, step, { ...db('succeeded'), health: { url: 'u', outcome: 'healthy' } })).toBe('ended');
  });
});

describe('an isolation round, read from its record', () => {
  const point = { tag: 't', backup_id: 7 };
  const round = (r: Partial<IsolationRound>): IsolationRound => ({ names: ['p0'], status: 'sending', ...r });
  it.each<[string, IsolationRound, LifeState]>([
    ['no restore point yet', round({}), 'waiting'],
    ['its writes on their way', round({ restore_point: point, operation_ids: [] }), 'sending'],
    ['accepted', round({ restore_point: point, status: 'accepted', operation_ids: ['op'] }), 'following'],
    ['broken, its restore to send', round({ restore_point: point, status: 'broken' }), 'restoring'],
    [
      'broken, its restore accepted',
      round({ restore_point: point, status: 'broken', restored: { backup_id: 7, operation_id: 'r', status: 'accepted' } }),
      'restoring',
    ],
    [
      'broken, its restore kept from leaving by a halt',
      round({
        restore_point: point,
        status: 'broken',
        restored: { backup_id: 7, operation_id: null, status: 'not sent', reason: 'the run was interrupted first' },
      }),
      'restoring',
    ],
    ['broken and put back', round({ restore_point: point, status: 'broken', restored: { backup_id: 7, operation_id: 'r', status: 'succeeded' } }), 'ended'],
    ['healthy', round({ restore_point: point, status: 'healthy' }), 'ended'],
    ['could not be judged', round({ restore_point: point, status: 'unknown' }), 'ended'],
    ['failed before its restore point', round({ status: 'failed' }), 'ended'],
  ])('%s', (_what, r, state) => {
    expect(roundAt(r)).toBe(state);
  });
});
