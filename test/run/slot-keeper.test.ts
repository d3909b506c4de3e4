import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import type { Plan, Step, TaskSummary } from '../../src/plan/plan.js';
import type { CallPort } from '../../src/run/caller.js';
import { SlotKeeper, type SlotRun } from '../../src/run/slot-keeper.js';
import type { StepResult } from '../../src/run/types.js';
import type { Watcher } from '../../src/run/watcher.js';

const ENVS = 300;
const WRITES = 9;
const TAG = 'sitefleet-before-plugins-2026-11-27';
const task = { index: 0, name: 'plugins', action: 'plugins.update', backup_first: {} } as unknown as TaskSummary;

/** A pinned night's plan: each environment's restore point, then its nine writes guarded by it. */
function night(): Plan {
  const steps: Step[] = [];
  for (let e = 0; e < ENVS; e++) {
    const env = `env-${e}`;
    const base = { task: 'plugins', task_index: 0, target: { env_id: env, site: `s-${e}`, environment: 'live' }, params: { env_id: env }, lock: env };
    steps.push({
      ...base,
      id: `b:${env}`,
      action: 'backups.create',
      endpoint: 'addManualBackup',
      method: 'POST',
      path: '/b',
      body: { tag: TAG },
      idempotent: false,
      role: 'backup',
    });
    for (let w = 0; w < WRITES; w++)
      steps.push({
        ...base,
        id: `w:${env}:${w}`,
        action: 'plugins.update',
        endpoint: 'updatePlugin',
        method: 'PUT',
        path: '/p',
        body: {},
        idempotent: true,
        backup_step: `b:${env}`,
      });
  }
  return { steps, tasks: [task], settings: {}, date: '2026-11-27' } as unknown as Plan;
}

/** A run whose results count their reads: what the keeper's work over the plan costs. */
function runOf(plan: Plan, status: StepResult['status']) {
  const results = new Map<string, StepResult>();
  for (const s of plan.steps) results.set(s.id, { step_id: s.id, status, http_status: 202, operation_id: null, attempts: 1, error: null, reason: null });
  let gets = 0;
  const counted = new Proxy(results, {
    get(target, key) {
      if (key === 'get') return (id: string) => (gets++, target.get(id));
      const value = Reflect.get(target, key, target) as unknown;
      return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
    },
  });
  let reads = 0;
  const caller = {
    read: () => {
      reads++;
      return Promise.resolve({ environment: { display_name: 'live', backups: [] } });
    },
  } as unknown as CallPort;
  const run: SlotRun = {
    plan,
    results: counted,
    options: { caller, logger: pino({ level: 'silent' }) },
    watcher: {} as Watcher,
    sequence: { enter: () => Promise.resolve(() => {}) },
    stop: { stop: () => {} },
    watchOptions: () => ({}) as never,
    record: () => Promise.resolve(),
    recordRoom: () => Promise.resolve(),
    sendsOver: () => false,
  };
  return { run, gets: () => gets, reads: () => reads };
}

/** A keeper of one environment whose backup list is `list`; each removal answered as `answer` says (by the backup's id). */
function keeperOver(plan: Plan, list: unknown[], answer: (id: string) => object, more: Partial<SlotRun>): SlotKeeper {
  const caller = {
    read: () => Promise.resolve({ environment: { display_name: 'live', backups: list } }),
    withPlace: (_p: unknown, _n: string, fn: (place: unknown) => unknown) => fn(undefined),
    call: (_e: string, params: { backup_id: string }) => Promise.resolve({ ok: true, value: { data: answer(params.backup_id) } }),
  } as unknown as CallPort;
  const { run } = runOf(plan, 'planned');
  return new SlotKeeper({ ...run, results: new Map(), options: { ...run.options, caller }, ...more });
}

describe('SlotKeeper at fleet scale (bench scenario 32: 500 environments spent minutes of CPU here)', () => {
  it("makes room for a wave's restore points with one pass over the plan, not one a restore point", async () => {
    const plan = night();
    const { run, gets, reads } = runOf(plan, 'planned');
    await new SlotKeeper(run).beforeWave(task, plan.steps);
    expect(reads()).toBe(ENVS);
    // One pass: each step's result read a few times, not each backup's writes once per environment.
    expect(gets()).toBeLessThan(4 * plan.steps.length);
  });

  it("removes a task's judged restore points with one pass over the plan", async () => {
    const plan = night();
    const { run, gets, reads } = runOf(plan, 'succeeded');
    await new SlotKeeper(run).afterTask(task);
    expect(reads()).toBe(ENVS);
    expect(gets()).toBeLessThan(4 * plan.steps.length);
  });
});

describe('SlotKeeper: room that could not all be made', () => {
  it('records the backup step failed, naming the backup that went before the refusal (in the report, not only the log)', async () => {
    const plan = { ...night(), steps: night().steps.slice(0, 1 + WRITES) } as Plan;
    const backup = (id: number, note: string, created_at: number) => ({ id, name: `n-${id}`, note, type: 'manual', created_at });
    const list = [
      backup(1, 'launch', 1),
      backup(2, 'x', 2),
      backup(3, 'y', 3),
      backup(4, TAG.replace('11-27', '11-01'), 4),
      backup(5, TAG.replace('11-27', '11-02'), 5),
      backup(6, 'z', 6),
    ];
    const recorded: StepResult[] = [];
    const keeper = keeperOver(plan, list, (id) => (id === '4' ? {} : { status: 409, message: 'locked' }), {
      record: (_t, _s, r) => (recorded.push(r), Promise.resolve()),
    });
    await keeper.beforeWave(task, plan.steps);
    expect(recorded).toEqual([
      expect.objectContaining({ step_id: plan.steps[0]!.id, status: 'failed', backup_slots: { removed: [{ id: 4, tag: list[3]!.note, why: 'room' }] } }),
    ]);
  });
});

describe('SlotKeeper: what a backup step found and removed, on its records from the first', () => {
  it('puts its room and the earlier backups of its tag on each record once, and a resumed run reads the earlier ones back', async () => {
    const plan = { ...night(), steps: night().steps.slice(0, 1 + WRITES) } as Plan;
    const step = plan.steps[0]!;
    const backup = (id: number, note: string) => ({ id, name: `n-${id}`, note, type: 'manual', created_at: id });
    const list = [backup(1, 'a'), backup(2, 'b'), backup(3, TAG.replace('11-27', '11-01')), backup(4, TAG), backup(5, 'c')];
    const journaled: unknown[] = [];
    const keeper = keeperOver(plan, list, () => ({}), { recordRoom: (s, slots) => (journaled.push([s.id, slots]), Promise.resolve()) });
    const { run } = runOf(plan, 'planned');
    await keeper.beforeWave(task, plan.steps);
    // Journaled once made, before the backup is asked for.
    expect(journaled).toEqual([[step.id, { removed: [{ id: 3, tag: list[2]!.note, why: 'room' }], earlier: [4] }]]);
    const sent: StepResult = { step_id: step.id, status: 'accepted', http_status: 202, operation_id: 'op', attempts: 1, error: null, reason: null };
    const once = keeper.withRoom(step, sent);
    const slots = { removed: [{ id: 3, tag: list[2]!.note, why: 'room' }], earlier: [4] };
    expect(once.backup_slots).toEqual(slots);
    expect(keeper.withRoom(step, once).backup_slots).toEqual(slots);
    // Resumed: a new keeper, with the record read back from the journal.
    const resumed = new SlotKeeper({ ...run, results: new Map([[step.id, once]]) });
    expect(resumed.earlier(step)).toEqual(new Set([4]));
    expect(resumed.withRoom(step, once)).toBe(once);
    // Resumed with only the journal's room record (killed before the backup was answered): its next record carries it.
    const fromJournal = new SlotKeeper({ ...run, results: new Map() }, new Map([[step.id, slots as never]]));
    expect(fromJournal.earlier(step)).toEqual(new Set([4]));
    expect(fromJournal.withRoom(step, sent).backup_slots).toEqual(slots);
  });
});
