import { describe, expect, it } from 'vitest';
import { estimateRun, DEFAULT_OPERATION_MS } from '../../src/plan/estimate.js';
import type { Plan, Step, TaskSummary } from '../../src/plan/plan.js';
import type { EndpointName } from '../../src/api/endpoints.js';
import type { HealthSpec } from '../../src/health/spec.js';

/** A plan of one task with `n` steps of `action` (and a restore point before each write with backup_first). */
function planOf(
  action: string,
  endpoint: EndpointName,
  n: number,
  task: Partial<TaskSummary> = {},
  wave?: (i: number) => number,
  env = (i: number) => `e${i}`,
): Plan {
  const steps: Step[] = [];
  for (let i = 0; i < n; i++) {
    const base = {
      task: 't',
      task_index: 0,
      target: { env_id: env(i) },
      method: 'PUT',
      path: '/x',
      params: {},
      idempotent: true,
      ...(wave ? { wave: wave(i) } : {}),
    };
    // One restore point an environment, before its first write.
    if (task.backup_first && !steps.some((s) => s.target.env_id === env(i)))
      steps.push({ ...base, id: `b${i}`, action: 'backups.create', endpoint: 'addManualBackup', role: 'backup' });
    steps.push({ ...base, id: `s${i}`, action, endpoint, ...(task.health ? { health: { url: 'https://example.com/' } } : {}) });
  }
  const summary: TaskSummary = { index: 0, name: 't', action, matched: n, steps: steps.length, skipped: 0, allow_empty: false, ...task };
  return {
    version: 1,
    playbook: 'p.yaml',
    name: 'p',
    company: 'c',
    date: '2026-11-23',
    settings: {},
    inventory: { environments: n, themes: 1 },
    tasks: [summary],
    steps,
    skipped: [],
  };
}

const none = new Map<string, number>();

/** A guarded task's health spec (the page cache cleared before the look after, as by default). */
const health: HealthSpec = {
  url: 'https://example.com/',
  status: [[200, 399]],
  not_contains: [],
  timeout_ms: 15_000,
  attempts: 1,
  interval_ms: 5000,
  concurrency: 8,
  on_missing_domain: 'skip',
};

describe('estimating a run', () => {
  it('writes not waited for: their number at the rate limit', () => {
    expect(estimateRun(planOf('php.set_version', 'modifyPhpVersion', 120), { perSecond: 2, learned: none }).ms).toBe(60_000);
  });

  it('a waiting task: its polls take slots too, and the last operation runs after the last write (learned, else the stated default)', () => {
    const plan = planOf('php.set_version', 'modifyPhpVersion', 100, { wait: true });
    // 100 writes + 110 polls at 10/s: the last operation (4 s after the last write at 10 s) ends before the polls do.
    expect(estimateRun(plan, { perSecond: 10, learned: new Map([['php.set_version', 4000]]) })).toMatchObject({
      ms: 21_000,
      tasks: [{ writes: 100, polls: 110, operationMs: 4000, learned: true }],
    });
    // Nothing learned: the stated default, which outlasts the polls.
    expect(estimateRun(plan, { perSecond: 10, learned: none }).ms).toBe(10_000 + DEFAULT_OPERATION_MS);
    // Theme updates are confirmed through the listing: a few reads, not a poll each; the last operation, then the wave's one read-back (0.1 s at 10/s).
    const themes = planOf('themes.update', 'bulkUpdateThemes', 100, { wait: true });
    expect(estimateRun(themes, { perSecond: 10, learned: new Map([['themes.update', 4000]]) }).ms).toBe(10_000 + 4000 + 100);
  });

  it('waves wait for their operations and pause between them; creating calls keep to their own limit', () => {
    const rollout = planOf('php.set_version', 'modifyPhpVersion', 11, { wait: true, rollout: { canary: 1, waves: ['100%'], pause_ms: 60_000 } }, (i) =>
      i === 0 ? 0 : 1,
    );
    const learned = new Map([['php.set_version', 5000]]);
    // Canary: its write and operation (1 + 5 s), the pause; then 10 writes and 11 polls at 1/s (outlasting the last operation).
    expect(estimateRun(rollout, { perSecond: 1, learned }).ms).toBe(6000 + 60_000 + 21_000);
    // Ten backups at 5 a minute: two minutes, whatever the general budget.
    expect(estimateRun(planOf('backups.create', 'addManualBackup', 10), { perSecond: 2, createPerSecond: 5 / 60, learned: none }).ms).toBe(120_000);
  });

  it("a core write's database step: one more command and poll each, and one more operation each life waits for", () => {
    const plan = planOf('core.update', 'runWpCliCommand', 10, { wait: true });
    for (const s of plan.steps) s.body = { wp_command: 'wp core update --version=6.7.2' };
    // 10 commands + 11 polls, then 10 database steps and their 11 polls: 42 slots at 1/s, outlasting each life (1 s + 2 × 5 s); then the read-back.
    const learned = new Map([['core.update', 5000]]);
    expect(estimateRun(plan, { perSecond: 1, learned })).toMatchObject({ ms: 43_000, tasks: [{ writes: 10, polls: 11, databaseSteps: 10 }] });
    // At 100/s the lives set the time: the last write at 0.1 s, its operation and its database step's, then the read-back.
    expect(estimateRun(plan, { perSecond: 100, learned }).ms).toBe(100 + 2 * 5000 + 10);
  });

  it('with the time available: what would be left', () => {
    const plan = planOf('php.set_version', 'modifyPhpVersion', 100);
    expect(estimateRun(plan, { perSecond: 1, learned: none, availableMs: 200_000 }).left).toBe(0);
    expect(estimateRun(plan, { perSecond: 1, learned: none, availableMs: 60_000 }).left).toBe(40);
  });

  it('creating calls without create_rate_limit: the real service’s documented 5 a minute, said to be assumed', () => {
    const backups = estimateRun(planOf('backups.create', 'addManualBackup', 10), { perSecond: 2, learned: none });
    expect(backups).toMatchObject({ ms: 120_000, createAssumed: true, tasks: [{ createMs: 120_000 }] });
    expect(backups.createPerSecond).toBeCloseTo(5 / 60);
    expect(estimateRun(planOf('backups.create', 'addManualBackup', 10), { perSecond: 2, createPerSecond: 1, learned: none }).createAssumed).toBe(false);
  });

  it('a guarded night: each life starts when its restore point leaves the creating-call lane, then waits for its backup, its write and its clear and look', () => {
    const guarded: Partial<TaskSummary> = { wait: true, backup_first: { tag: 'before' }, health };
    const plan = planOf('themes.update', 'bulkUpdateThemes', 11, guarded);
    const learned = new Map([
      ['themes.update', 2000],
      ['backups.create', 3000],
    ]);
    // The 11th backup leaves at 10 s (one a second); its backup (3 s), the write (2 s), the clear and look (4 s); the wave's read-back (10 ms at 100/s).
    const estimate = estimateRun(plan, { perSecond: 100, createPerSecond: 1, learned, learnedAfter: new Map([['themes.update', 4000]]) });
    expect(estimate).toMatchObject({ ms: 19_010, tasks: [{ writes: 11, restorePoints: 11, clears: 11, createMs: 11_000, afterMs: 4000, afterLearned: true }] });
    // Nothing taught the clear: its operation is the stated default.
    expect(estimateRun(plan, { perSecond: 100, createPerSecond: 1, learned }).ms).toBe(10_000 + 3000 + 2000 + DEFAULT_OPERATION_MS + 10);
  });

  it("an environment's clears are at least 10 s apart (the vendor's one manual clear per 10 s)", () => {
    const guarded: Partial<TaskSummary> = { wait: true, health };
    // Three pinned updates on one environment: each write's operation (1 s) and clear and look (1 s) in turn, the clears 10 s apart; the read-back (1 ms).
    const plan = planOf('themes.update', 'updateTheme', 3, guarded, undefined, () => 'e0');
    const estimate = estimateRun(plan, { perSecond: 1000, learned: new Map([['themes.update', 1000]]), learnedAfter: new Map([['themes.update', 1000]]) });
    expect(estimate.ms).toBe(3 + 3 * 2000 + 2 * 8000 + 1);
  });

  it('read-backs: one read per written environment where the listing lags (plugins), after the wave’s lives', () => {
    const plan = planOf('plugins.update', 'bulkUpdatePlugins', 4, { verify: true });
    // 4 writes, then 4 reads of the environments' own listings, at 1/s.
    expect(estimateRun(plan, { perSecond: 1, learned: none })).toMatchObject({ ms: 8000, tasks: [{ readBacks: 4 }] });
    expect(estimateRun(planOf('themes.update', 'bulkUpdateThemes', 4, { verify: true }), { perSecond: 1, learned: none }).tasks[0]!.readBacks).toBe(1);
  });
});
