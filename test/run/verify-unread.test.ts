import { describe, expect, it } from 'vitest';
import { ACTIONS } from '../../src/actions/index.js';
import { HttpError } from '../../src/errors.js';
import type { Step } from '../../src/plan/plan.js';
import type { CallPort } from '../../src/run/caller.js';
import type { StepResult } from '../../src/run/types.js';
import { verifyTask } from '../../src/run/verify.js';

/** A pinned plugin write to `env`, its operation ended. */
function write(env: string): [Step, StepResult] {
  const step = {
    id: `0:${env}`,
    task_index: 0,
    action: 'plugins.update',
    target: { env_id: env },
    endpoint: 'updatePlugin',
    params: { env_id: env },
    body: { name: 'forms', update_version: '2.0.0' },
    idempotent: true,
    updates: [{ plugin: 'forms', from: '1.0.0', to: '2.0.0' }],
  } as unknown as Step;
  return [step, { step_id: step.id, status: 'succeeded', http_status: 202, operation_id: 'op', attempts: 1, error: null, reason: null }];
}

describe('a read-back that cannot read the listing', () => {
  it('holds each write it was to judge (not_read_back, counted against the budget): never done unseen, never a rejection that escapes the run', async () => {
    const writes = [write('e1'), write('e2')];
    const results = new Map(writes.map(([s, r]) => [s.id, r]));
    const caller = { read: () => Promise.reject(new HttpError(503, 'GET', '/sites/environments/e1/plugins', 'unavailable')) } as unknown as CallPort;

    const judged = await verifyTask(
      ACTIONS.get('plugins.update')!,
      caller,
      'c',
      writes.map(([s]) => s),
      results,
      false,
    );
    expect(judged.map(([s, r]) => [s.id, r.status, r.held?.code, r.held?.counts_against_budget])).toEqual([
      ['0:e1', 'held', 'not_read_back', true],
      ['0:e2', 'held', 'not_read_back', true],
    ]);
    expect(judged[0]![1].reason).toContain('answered 503');
  });

  it('a write held already keeps its own hold (and what to do about it); only one that stood as done is held for it', async () => {
    const [[step, done], [other, was]] = [write('e1'), write('e2')];
    const held: StepResult = {
      ...was,
      status: 'held',
      held: { code: 'database_not_updated', detail: 'x', override: 'run wp core update-db', counts_against_budget: true },
    };
    const results = new Map([
      [step.id, done],
      [other.id, held],
    ]);
    const caller = { read: () => Promise.reject(new HttpError(503, 'GET', '/x', 'unavailable')) } as unknown as CallPort;
    const judged = await verifyTask(ACTIONS.get('plugins.update')!, caller, 'c', [step, other], results, false);
    expect(judged.map(([s, r]) => [s.id, r.held?.code])).toEqual([[step.id, 'not_read_back']]);
  });
});
