import { describe, expect, it } from 'vitest';
import type { SharedWindow } from '../../src/coord/types.js';
import { Caller } from '../../src/run/caller.js';
import { PRIORITY, RateBudget } from '../../src/run/rate-budget.js';
import { DEFAULT_RETRY } from '../../src/run/retry.js';
import { silent } from '../helpers/run.js';
import { useSimulator, waitFor } from '../helpers/sim.js';

const start = useSimulator();

describe('Caller', () => {
  it('takes a place among the calls in flight before a budget slot, for every call: polls and writes cannot hold what the other waits for', async () => {
    const { sim, client } = await start();
    const budget = new RateBudget(2, 300);
    const caller = new Caller(client, { budget, logger: silent, concurrency: 2 });
    const read = (hooks = {}) => caller.call('listApiKeys', { id: sim.companyId }, undefined, true, hooks);
    try {
      // Both places are held by writes that have not asked the budget yet...
      let openGate!: () => void;
      const gate = new Promise<void>((resolve) => (openGate = resolve));
      const writes = [1, 2].map(() =>
        caller.withPlace(PRIORITY.write, 'listApiKeys', async (place) => {
          await gate;
          return read({ place });
        }),
      );
      // ...when more polls come than the budget has slots. Taking a slot first, they would hold the
      // whole budget while waiting for a place, and the writes would wait for the budget for ever.
      const polls = [1, 2, 3, 4].map(() => read({ priority: PRIORITY.poll }));
      await waitFor(() => caller.waitingForPlace === polls.length);
      openGate();
      const all = await Promise.race([Promise.all([...writes, ...polls]), new Promise<'stalled'>((r) => setTimeout(() => r('stalled'), 5000))]);
      expect(all).not.toBe('stalled');
      expect((all as { ok: boolean }[]).every((o) => o.ok)).toBe(true);
    } finally {
      budget.dispose();
    }
  });

  it('a 429 on a creating call while the general window has room teaches the creation rule alone; a 429 on a read teaches the general one', async () => {
    const { sim, client } = await start({ createRate: '2/s' });
    const budget = new RateBudget(100, 1000);
    const creation = new RateBudget(100, 1000);
    const caller = new Caller(client, { budget, creation, logger: silent, concurrency: 4, retry: { ...DEFAULT_RETRY, rateLimitWaitMs: 0 } });
    const env = [...sim.fleet.environments.keys()][0]!;
    try {
      const outcomes = await Promise.all([1, 2, 3].map((i) => caller.call('addManualBackup', { env_id: env }, { tag: `t${i}` }, false)));
      expect(outcomes.filter((o) => o.ok)).toHaveLength(2);
      expect(creation.rateLimitedCount).toBe(1);
      // What the service let through in the window, as far as answers were in when the 429 came.
      expect(creation.limit).toBeLessThanOrEqual(2);
      expect(budget.rateLimitedCount).toBe(0);
      expect(budget.limit).toBe(100);
      // A read never takes a slot of the creation rule; a read refused teaches the general rule.
      sim.setFaults({ 429: 1 });
      const read = await caller.call('listBackups', { env_id: env }, undefined, true);
      expect(read.ok).toBe(false);
      expect(budget.rateLimitedCount).toBe(1);
      expect(creation.rateLimitedCount).toBe(1);
    } finally {
      budget.dispose();
      creation.dispose();
    }
  });

  it('log reads take the logs rule first: a 429 on one while the general window has room teaches that rule alone', async () => {
    const { sim, client } = await start({ logsRate: '2/s' });
    const budget = new RateBudget(100, 1000);
    const logs = new RateBudget(100, 1000);
    const caller = new Caller(client, { budget, logs, logger: silent, concurrency: 4, retry: { ...DEFAULT_RETRY, rateLimitWaitMs: 0 } });
    const env = [...sim.fleet.environments.keys()][0]!;
    const query = { file_name: 'error', lines: 10 };
    try {
      const outcomes = await Promise.all([1, 2, 3].map(() => caller.call('getLogs', { env_id: env }, undefined, true, { query })));
      expect(outcomes.filter((o) => o.ok)).toHaveLength(2);
      expect(logs.rateLimitedCount).toBe(1);
      expect(logs.limit).toBeLessThanOrEqual(2);
      expect(budget.rateLimitedCount).toBe(0);
      expect(budget.limit).toBe(100);
      // Other reads never take a slot of the logs rule, and a read refused teaches the general one.
      sim.setFaults({ 429: 1 });
      expect((await caller.call('listBackups', { env_id: env }, undefined, true)).ok).toBe(false);
      expect(budget.rateLimitedCount).toBe(1);
      expect(logs.rateLimitedCount).toBe(1);
    } finally {
      budget.dispose();
      logs.dispose();
    }
  });

  it('log reads waiting for their rule never hold every place in flight: a poll goes past them', async () => {
    const { sim, client } = await start();
    const budget = new RateBudget(100, 1000);
    // One log read a minute: the second and later wait (as many broken sites at once would).
    const logs = new RateBudget(1, 60_000);
    const caller = new Caller(client, { budget, logs, logger: silent, concurrency: 4 });
    const env = [...sim.fleet.environments.keys()][0]!;
    const stop = new AbortController();
    try {
      const reads = [1, 2, 3, 4, 5].map(() =>
        caller.call('getLogs', { env_id: env }, undefined, true, { query: { file_name: 'error', lines: 10 }, stopSignal: stop.signal }),
      );
      await waitFor(() => sim.log.filter((e) => e.endpoint === 'getLogs').length === 1);
      const poll = await caller.call('listApiKeys', { id: sim.companyId }, undefined, true, { priority: PRIORITY.poll, stopSignal: stop.signal });
      expect(poll.ok).toBe(true);
      stop.abort();
      await Promise.all(reads);
    } finally {
      budget.dispose();
      logs.dispose();
    }
  });

  it('with --coordination, a log read takes the company window of log reads beside the general one; other calls never take it', async () => {
    const { sim, client } = await start();
    const taken: string[] = [];
    const window = (name: string): SharedWindow => ({
      take: () => (taken.push(name), Promise.resolve()),
      give: () => undefined,
      pausedForMs: () => 0,
    });
    const caller = new Caller(client, {
      shared: window('general'),
      sharedCreation: window('create'),
      sharedLogs: window('logs'),
      logger: silent,
    });
    const env = [...sim.fleet.environments.keys()][0]!;
    expect((await caller.call('getLogs', { env_id: env }, undefined, true, { query: { file_name: 'error', lines: 5 } })).ok).toBe(true);
    expect(taken).toEqual(['general', 'logs']);
    taken.length = 0;
    expect((await caller.call('listBackups', { env_id: env }, undefined, true)).ok).toBe(true);
    expect((await caller.call('addManualBackup', { env_id: env }, { tag: 't' }, false)).ok).toBe(true);
    expect(taken).toEqual(['general', 'general', 'create']);
  });

  it('a cache clear refused for its environment (one clear every 10 s) waits out its Retry-After and teaches the general budget nothing', async () => {
    const { sim, client } = await start({ clearCacheGapMs: 300, retryAfterUnitMs: 50 });
    const budget = new RateBudget(100, 1000);
    const caller = new Caller(client, { budget, logger: silent, concurrency: 4 });
    const [a, b] = [...sim.fleet.environments.keys()];
    try {
      const first = await caller.call('clearCache', {}, { environment_id: a }, true);
      const [again, other] = await Promise.all([
        caller.call('clearCache', {}, { environment_id: a }, true),
        caller.call('clearCache', {}, { environment_id: b }, true),
      ]);
      expect([first.ok, again.ok, other.ok]).toEqual([true, true, true]);
      expect([first.attempts, again.attempts, other.attempts]).toEqual([1, 2, 1]);
      const clears = sim.log.filter((e) => e.endpoint === 'clearCache');
      expect(clears.map((e) => e.status).sort()).toEqual([202, 202, 202, 429]);
      expect(budget.rateLimitedCount).toBe(0);
      expect(budget.pausedForMs()).toBe(0);
    } finally {
      budget.dispose();
    }
  });
});
