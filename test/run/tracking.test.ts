import { describe, expect, it } from 'vitest';
import { failureBudget } from '../../src/run/failure-budget.js';
import { runInProcess } from '../helpers/run.js';
import { useSimulator, waitFor } from '../helpers/sim.js';

const start = useSimulator();
const fast = { tracking: { intervalMs: 20, maxIntervalMs: 100, notFoundGraceMs: 5000 } };

describe('operation tracking', () => {
  it('with wait, steps end succeeded once their operation finished, and polls share the budget', async () => {
    const { sim } = await start({ sites: 6, operationDelayMs: 150, operationPolls: { hidden: 1, running: 1 } });
    const { results } = await runInProcess(
      sim,
      'settings: { wait: true }\ntasks:\n  - { name: b, action: backups.create, target: all, with: { tag: w } }\n',
      fast,
    );
    expect([...results.values()].map((r) => r.status)).toEqual([...results.values()].map(() => 'succeeded'));
    const polls = sim.log.filter((e) => e.endpoint === 'getOperation');
    expect(polls.some((e) => e.status === 404)).toBe(true); // "not visible yet" was tolerated
    expect(polls.some((e) => e.status === 202)).toBe(true);
    for (const env of sim.fleet.environments.values()) expect(env.backups.filter((b) => b.note === 'w')).toHaveLength(1);
  });

  it('an environment busy with someone else’s operation: the step is sent again once it is free', async () => {
    // The simulator's clock stands until our step was refused once: the other actor's operation cannot
    // end first, however long the run takes to plan on a busy machine; then it runs an hour ahead.
    const stopped = Date.now();
    let released = false;
    const { sim, client } = await start({ sites: 4, operationDelayMs: 300, now: () => (released ? Date.now() + 3_600_000 : stopped) });
    const busy = [...sim.fleet.environments.values()][0]!;
    await client.call('addManualBackup', { env_id: busy.id }, { tag: 'someone else' }); // another actor keeps this environment busy
    const refused = waitFor(() => sim.log.some((e) => e.method === 'PUT' && (e.body as { environment_id: string }).environment_id === busy.id), 20_000).then(
      () => void (released = true),
    );
    const { results, plan } = await runInProcess(
      sim,
      'tasks:\n  - { name: p, action: php.set_version, target: all, wait: true, with: { php_version: "8.4" } }\n',
      { ...fast, blockedBackoffMs: 500 },
    );
    await refused;
    const byEnv = new Map(plan.steps.map((s) => [s.target.env_id, results.get(s.id)!]));
    expect(byEnv.get(busy.id)).toMatchObject({ status: 'succeeded', attempts: 2 });
    expect([...byEnv.values()].every((r) => r.status === 'succeeded')).toBe(true);
    const sent = sim.log.filter((e) => e.method === 'PUT' && (e.body as { environment_id: string }).environment_id === busy.id);
    expect(sent).toHaveLength(2);
    expect(sim.operations.all.get(sent[0]!.operation_id!)!.state).toBe('failed');
  });

  it('an environment that stays busy: the step ends failed with the service’s message', async () => {
    const { sim, client } = await start({ sites: 4, operationDelayMs: 60_000 });
    const busy = [...sim.fleet.environments.values()][0]!;
    await client.call('addManualBackup', { env_id: busy.id }, { tag: 'someone else' });
    const { results, plan } = await runInProcess(
      sim,
      'tasks:\n  - { name: p, action: php.set_version, target: { ids: ["' + busy.id + '"] }, wait: true, with: { php_version: "8.4" } }\n',
      { ...fast, blockedBackoffMs: 10 },
    );
    expect(results.get(plan.steps[0]!.id)).toMatchObject({
      status: 'failed',
      reason: 'operation failed: The environment is blocked by another process',
      attempts: 4,
    });
  });

  it('an operation that outlives the task timeout ends unknown, with a pointer to `sitefleet status`', async () => {
    const { sim } = await start({ sites: 2, operationDelayMs: 5000 });
    const { results } = await runInProcess(
      sim,
      'tasks:\n  - { name: b, action: backups.create, target: all, wait: true, timeout: 300ms, with: { tag: t } }\n',
      fast,
    );
    for (const r of results.values()) {
      expect(r.status).toBe('unknown');
      expect(r.operation_id).toMatch(/^backups:add-manual-/);
      expect(r.reason).toMatch(/still in progress after .*sitefleet status/);
    }
  });

  it('without wait, a write waits for the previous operation on its environment: backup then PHP change both work', async () => {
    let ahead = 0;
    const { sim } = await start({ sites: 5, operationDelayMs: 200, now: () => Date.now() + ahead });
    const { results } = await runInProcess(
      sim,
      'tasks:\n  - { name: b, action: backups.create, target: all, with: { tag: x } }\n  - { name: p, action: php.set_version, target: all, with: { php_version: "8.4" } }\n',
      fast,
    );
    expect([...results.values()].every((r) => r.status === 'accepted' || r.status === 'succeeded')).toBe(true);
    const ops = [...sim.operations.all.values()];
    expect(ops.filter((o) => o.state === 'failed')).toEqual([]);
    ahead += 250; // the last PHP changes end
    sim.operations.settle();
    for (const env of sim.fleet.environments.values()) expect(env.phpVersion).toBe('8.4');
  });

  it('verify: true fails the steps whose update the listing still shows as available', async () => {
    const { sim } = await start({ sites: 8, operationDelayMs: 50 });
    let bumped = '';
    const { results, plan } = await runInProcess(sim, 'tasks:\n  - { name: t, action: themes.update, target: all, wait: true, verify: true }\n', {
      ...fast,
      onEvent(event) {
        // A new release lands right after the first update finished: that environment is behind again.
        if (event.type === 'update' && event.result.status === 'succeeded' && !bumped) {
          bumped = (event.step.body as { themes: { name: string }[] }).themes[0]!.name;
          sim.fleet.catalog.get(bumped)!.versions.push('99.0.0');
        }
      },
    });
    const failed = plan.steps.filter((s) => results.get(s.id)!.status === 'failed');
    expect(failed.length).toBeGreaterThan(0);
    for (const s of failed) expect(results.get(s.id)!.reason).toBe(`verify: the listing still shows an update available for ${bumped}`);
    expect(plan.steps.filter((s) => results.get(s.id)!.status === 'succeeded').length).toBe(plan.steps.length - failed.length);
  });
});

describe('rollout waves and failure budgets', () => {
  it('runs the canary alone, then each wave only after the previous one’s operations finished', async () => {
    const { sim } = await start({ sites: 10, operationDelayMs: 60 });
    const yaml =
      'tasks:\n  - { name: b, action: backups.create, target: all, rollout: { canary: 1, waves: ["50%", "100%"], pause: 50ms }, with: { tag: r } }\n';
    const { results, plan } = await runInProcess(sim, yaml, fast);
    const waves = plan.steps.map((s) => s.wave!);
    expect(waves.filter((w) => w === 0)).toHaveLength(1);
    expect(Math.max(...waves)).toBe(2);
    expect(waves.filter((w) => w <= 1)).toHaveLength(Math.ceil(plan.steps.length / 2));
    expect([...results.values()].every((r) => r.status === 'succeeded')).toBe(true);
    // Every write of a wave arrived after every operation of the waves before it had completed.
    const arrival = new Map(sim.log.filter((e) => e.method === 'POST').map((e) => [e.path, e.at]));
    const doneAt = new Map(sim.log.filter((e) => e.endpoint === 'getOperation' && e.status === 200).map((e) => [e.operation_id, e.at]));
    for (const later of plan.steps) {
      for (const earlier of plan.steps.filter((s) => s.wave! < later.wave!)) {
        expect(arrival.get(`/v2${later.path}`)!).toBeGreaterThan(doneAt.get(results.get(earlier.id)!.operation_id!)!);
      }
    }
    // Membership depends on the inventory only.
    const again = await runInProcess(sim, yaml.replace('tag: r', 'tag: s'), fast);
    expect(again.plan.steps.map((s) => s.wave)).toEqual(waves);
  });

  it('a failing canary stops the run: the rest is skipped with "failure budget exceeded", nothing else is sent', async () => {
    const { sim } = await start({ sites: 10, operationDelayMs: 0 });
    sim.setFaults('503=1', { writesOnly: true }); // every write fails, and a creating call is not retried
    const { results, stopped } = await runInProcess(
      sim,
      'tasks:\n  - { name: b, action: backups.create, target: all, max_failures: 0, rollout: { canary: 1, waves: ["100%"] }, with: { tag: r } }\n',
      fast,
    );
    expect(stopped?.kind).toBe('budget');
    const statuses = [...results.values()].map((r) => r.status);
    expect(statuses.filter((s) => s === 'unknown')).toHaveLength(1);
    expect(statuses.filter((s) => s === 'skipped')).toHaveLength(statuses.length - 1);
    expect([...results.values()].find((r) => r.status === 'skipped')!.reason).toMatch(/failure budget exceeded/);
    expect(sim.log.filter((e) => e.method === 'POST')).toHaveLength(1);
  });

  it('budget semantics: a count, a percentage of the task’s steps rounded down, 100% never stops, unknown counts', async () => {
    const five = failureBudget(5, 100);
    expect(Array.from({ length: 6 }, () => five.fail())).toEqual([false, false, false, false, false, true]);
    const pct = failureBudget('10%', 25); // 2 allowed
    expect([pct.fail(), pct.fail(), pct.fail()]).toEqual([false, false, true]);
    const all = failureBudget('100%', 3);
    expect(Array.from({ length: 10 }, () => all.fail())).toEqual(Array(10).fill(false));
    const none = failureBudget(undefined, 3);
    expect(Array.from({ length: 10 }, () => none.fail()).some(Boolean)).toBe(false);

    const { sim } = await start({ sites: 10, operationDelayMs: 0 });
    sim.setFaults('lost=1', { writesOnly: true }); // every creating call ends unknown
    const { stopped, results } = await runInProcess(
      sim,
      'settings: { max_failures: 2 }\ntasks:\n  - { name: b, action: backups.create, target: all, with: { tag: u } }\n',
      { ...fast, concurrency: 1 },
    );
    expect(stopped?.kind).toBe('budget');
    expect([...results.values()].filter((r) => r.status === 'unknown')).toHaveLength(3);
  });
});
