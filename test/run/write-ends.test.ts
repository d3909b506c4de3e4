import { describe, expect, it } from 'vitest';
import { breaksOf, retriesOf, type WriteEnd } from '../../src/run/write-ends.js';

const AT = Date.parse('2026-11-20T02:10:00.000Z');
const target = { env_id: 'e1', site: 'shop', environment: 'live' };
const restored = { backup_id: 7, operation_id: 'op-r', status: 'succeeded' as const };
const base = { status: 'failed' as const, http_status: 202, error: null, reason: 'the site broke', attempts: 1 };

const pinned = (over: Partial<WriteEnd> = {}, result: Partial<WriteEnd['result']> = {}): WriteEnd => ({
  action: 'plugins.update',
  target,
  body: { name: 'forms', update_version: '2.0.0' },
  precondition: 'forms 1.0.0 → 2.0.0',
  alone: true,
  ...over,
  result: { ...base, restored, health: { url: 'https://shop.test/', outcome: 'unhealthy', after: 'HTTP 500' }, ...result },
});

describe('what a write’s end teaches the quarantine', () => {
  it('a pinned write that broke its site and was restored names its version, with the logged line', () => {
    expect(breaksOf(pinned({}, { logged: { plugin: 'forms', line: 'PHP Fatal error in forms' } }), AT)).toEqual([
      { plugin: 'forms', version: '2.0.0', env_id: 'e1', site: 'shop', environment: 'live', at: AT, why: 'PHP Fatal error in forms' },
    ]);
    expect(breaksOf(pinned(), AT)[0]!.why).toBe("the site's check after the write: HTTP 500");
  });

  it('a pinned write put back by its own files (health.undo: items_first), no backup restored, names its version too', () => {
    const command = { kind: 'plugin' as const, name: 'forms', version: '1.0.0', wp_command: 'wp plugin install forms --version=1.0.0 --force' };
    const undone = {
      status: 'succeeded' as const,
      commands: [{ ...command, status: 'succeeded' as const, operation_id: 'op-u' }],
      health: { outcome: 'healthy' as const },
    };
    expect(breaksOf(pinned({}, { restored: undefined, undone }), AT)).toEqual([
      { plugin: 'forms', version: '2.0.0', env_id: 'e1', site: 'shop', environment: 'live', at: AT, why: "the site's check after the write: HTTP 500" },
    ]);
    // Its commands did not go through: nothing was put back by them, and no restore either.
    expect(breaksOf(pinned({}, { restored: undefined, undone: { ...undone, status: 'failed' } }), AT)).toEqual([]);
  });

  it('names none when it cannot tell which update broke the site, or when it did not', () => {
    const bulk = pinned({ body: { plugins: [{ name: 'forms' }, { name: 'seo' }] }, precondition: 'forms 1.0.0 → 2.0.0, seo 3.0.0 → 3.0.1' });
    expect(breaksOf(bulk, AT)).toEqual([]);
    expect(breaksOf(pinned({ alone: false }), AT)).toEqual([]);
    expect(breaksOf(pinned({}, { reason: 'undone: another write broke the site' }), AT)).toEqual([]);
    expect(breaksOf(pinned({}, { restored: { ...restored, status: 'not sent' } }), AT)).toEqual([]);
    expect(breaksOf(pinned({ action: 'php.set_version' }), AT)).toEqual([]);
  });

  it('the culprits isolation found, each with what showed when it went alone', () => {
    const end = pinned(
      { body: { plugins: [{ name: 'forms' }, { name: 'seo' }] } },
      {
        isolation: {
          updates: [
            { plugin: 'forms', from: '1.0.0', to: '2.0.0' },
            { plugin: 'seo', from: '3.0.0', to: '3.0.1' },
          ],
          rounds: [
            { names: ['forms', 'seo'], status: 'broken' },
            { names: ['seo'], status: 'healthy' },
            { names: ['forms'], status: 'broken', logged: { plugin: 'forms', line: 'Fatal in forms' } },
          ],
          outcome: 'found',
          culprits: [{ plugin: 'forms', from: '1.0.0', to: '2.0.0' }],
          restores: 2,
        },
      },
    );
    expect(breaksOf(end, AT)).toEqual([{ plugin: 'forms', version: '2.0.0', env_id: 'e1', site: 'shop', environment: 'live', at: AT, why: 'Fatal in forms' }]);
  });

  it("a lone round's logged line naming another item (an older breakage's line, read after a resume) is not the culprit's why", () => {
    const end = pinned(
      { body: { plugins: [{ name: 'forms' }, { name: 'seo' }] } },
      {
        isolation: {
          updates: [
            { plugin: 'forms', from: '1.0.0', to: '2.0.0' },
            { plugin: 'seo', from: '3.0.0', to: '3.0.1' },
          ],
          rounds: [
            {
              names: ['forms'],
              status: 'broken',
              health: { url: 'https://shop.test/', outcome: 'unhealthy', after: 'HTTP 500' },
              logged: { plugin: 'seo', line: 'Fatal in seo' },
            },
          ],
          outcome: 'found',
          culprits: [{ plugin: 'forms', from: '1.0.0', to: '2.0.0' }],
          restores: 2,
        },
      },
    );
    expect(breaksOf(end, AT)[0]!.why).toBe("the site's check after it: HTTP 500");
  });
});

describe('what a write’s end teaches the retries', () => {
  const bulk = (result: Partial<WriteEnd['result']>): WriteEnd => ({
    action: 'themes.update',
    target,
    body: { themes: [{ name: 'calm' }, { name: 'bold' }] },
    precondition: 'calm 1.0.0 → 1.1.0, bold 2.0 → 2.1',
    alone: true,
    result: { ...base, ...result },
  });

  it('a 503 on a bulk write: a failure of each update, at the versions its plan judged, in this run', () => {
    expect(retriesOf(bulk({ http_status: 503, reason: 'HTTP 503' }), 'run-1', AT, () => false)).toEqual([
      { theme: 'calm', env_id: 'e1', version: '1.1.0', site: 'shop', environment: 'live', run: 'run-1', at: AT, why: 'HTTP 503' },
      { theme: 'bold', env_id: 'e1', version: '2.1', site: 'shop', environment: 'live', run: 'run-1', at: AT, why: 'HTTP 503' },
    ]);
    expect(retriesOf(bulk({ http_status: 422 }), 'run-1', AT, () => false)).toEqual([]);
  });

  it('a bulk write read back not_updated: a failure of the items that stayed only (the others moved)', () => {
    const why = 'calm stays on 1.0.0: the service ran the update, the site did not move; a premium theme needs its licence on the site';
    const stayed = bulk({ reason: why, failure: { code: 'not_updated', stays: [{ name: 'calm', version: '1.0.0' }] } });
    expect(retriesOf(stayed, 'run-1', AT, () => false)).toEqual([
      { theme: 'calm', env_id: 'e1', version: '1.1.0', site: 'shop', environment: 'live', run: 'run-1', at: AT, why },
    ]);
  });

  it('a success clears only what failed there before', () => {
    const ok = bulk({ status: 'succeeded', reason: null });
    expect(retriesOf(ok, 'run-2', AT, () => false)).toEqual([]);
    expect(retriesOf(ok, 'run-2', AT, (env, kind, name) => env === 'e1' && kind === 'theme' && name === 'bold')).toEqual([
      { theme: 'bold', cleared: true, env_id: 'e1', at: AT },
    ]);
  });
});

describe('within a run', () => {
  it('a version that broke one site tonight is held for the writes after it', async () => {
    const { QuarantineTable } = await import('../../src/inventory/quarantine-table.js');
    const { quarantinedUpdates } = await import('../../src/run/write-ends.js');
    const table = QuarantineTable.of([]);
    const next = { ...pinned(), target: { env_id: 'e2' } };
    expect(quarantinedUpdates(next, table)).toEqual([]);
    table.add(breaksOf(pinned(), AT));
    expect(quarantinedUpdates(next, table)).toEqual([{ plugin: 'forms', from: '1.0.0', to: '2.0.0' }]);
    expect(quarantinedUpdates({ ...next, body: { name: 'forms', update_version: '2.0.1' }, precondition: 'forms 1.0.0 → 2.0.1' }, table)).toEqual([]);
  });
});

describe('when a break happened, as the journal tells it', () => {
  it('each break is dated by the first record that showed it, never by when the journal is read; what the end does not show is none', async () => {
    const { foldJournal } = await import('../../src/run/journal.js');
    const { journalBreaks } = await import('../../src/run/write-ends.js');
    const step = {
      id: '0:e1',
      task: 'night',
      task_index: 0,
      action: 'plugins.update',
      target,
      endpoint: 'updatePlugin',
      method: 'PUT',
      path: '/sites/environments/e1/plugins',
      params: {},
      body: { name: 'forms', update_version: '2.0.0' },
      precondition: 'forms 1.0.0 → 2.0.0',
      idempotent: true,
    };
    const plan = { steps: [step], tasks: [], skipped: [], settings: {}, company: 'c' };
    const result = (restoredStatus: 'sending' | 'succeeded', extra: object = {}) => ({
      step_id: step.id,
      ...base,
      operation_id: 'op',
      health: { url: 'https://shop.test/', outcome: 'unhealthy' as const, after: 'HTTP 500' },
      restored: { ...restored, status: restoredStatus },
      ...extra,
    });
    const start = { t: 'start' as const, v: 1 as const, run_id: 'r', playbook: 'p', report: 'r.json', started_at: new Date(AT).toISOString(), plan } as never;
    const records = [
      start,
      { t: 'result' as const, step: step.id, result: { ...base, step_id: step.id, status: 'accepted' as const, operation_id: 'op' }, at: AT + 1000 },
      { t: 'update' as const, step: step.id, result: result('sending'), at: AT + 2000 },
      { t: 'update' as const, step: step.id, result: result('succeeded'), at: AT + 3000 },
      // A later word on the step (a resume, `status`): the break keeps its time.
      { t: 'update' as const, step: step.id, result: result('succeeded', { reason: 'restored; looked at again' }), at: AT + 9_000_000 },
    ];
    const state = foldJournal(records);
    expect(journalBreaks(state.start.plan, state.results, state.putBack, AT).map((b) => b.at)).toEqual([AT + 3000]);
    // Isolation that did not see it again (not reproduced): the end names none, whatever a record before it showed.
    const notReproduced = result('succeeded', { isolation: { updates: [], rounds: [], outcome: 'not reproduced', culprits: [], restores: 2 } });
    const again = foldJournal([...records, { t: 'update' as const, step: step.id, result: notReproduced, at: AT + 10_000_000 }]);
    expect(journalBreaks(again.start.plan, again.results, again.putBack, AT)).toEqual([]);
  });
});
