import { describe, expect, it } from 'vitest';
import { useSimulator } from '../helpers/sim.js';
import { runInProcess } from '../helpers/run.js';

const start = useSimulator();
const php = 'tasks:\n  - { name: php, action: php.set_version, target: all, with: { php_version: "8.3" } }\n';
const backups = 'tasks:\n  - { name: backup, action: backups.create, target: all, with: { tag: t } }\n';

/** Faults on writes only: the inventory is read cleanly first. */
async function withWriteFaults(faults: string, options: Parameters<typeof start>[0] = {}) {
  const ctx = await start({ sites: 10, operationDelayMs: 0, ...options });
  const original = ctx.sim.setFaults.bind(ctx.sim);
  return { ...ctx, arm: () => original(faults, { writesOnly: true }) };
}

async function run(ctx: Awaited<ReturnType<typeof withWriteFaults>>, yaml: string, extra: Parameters<typeof runInProcess>[2] = {}) {
  // Arm the faults once the fleet is read: the first write is the first request after the reads.
  const readsDone = new Promise<void>((resolve) => {
    const timer = setInterval(() => {
      if (ctx.sim.log.some((e) => e.path.endsWith('/wp-themes'))) {
        clearInterval(timer);
        resolve();
      }
    }, 0);
  });
  const running = runInProcess(ctx.sim, yaml, {
    ...extra,
    onEvent: () => undefined,
  });
  await readsDone;
  ctx.arm();
  return running;
}

describe('the runner’s answer to every fault the simulator injects', () => {
  it('5xx: a safe call is retried until accepted; each environment changed once', async () => {
    const ctx = await withWriteFaults('500=0.3,502=0.1,503=0.1', { seed: 3 });
    const { results } = await run(ctx, php);
    expect([...results.values()].every((r) => r.status === 'accepted')).toBe(true);
    expect([...results.values()].some((r) => r.attempts > 1)).toBe(true);
    const changed = ctx.sim.log.filter((e) => e.changed).map((e) => (e.body as { environment_id: string }).environment_id);
    expect(new Set(changed).size).toBe(ctx.sim.fleet.environments.size);
  });

  it('5xx: a creating call is not re-sent; it ends unknown with the reason', async () => {
    const ctx = await withWriteFaults('503=1');
    const { results } = await run(ctx, backups);
    for (const r of results.values()) {
      expect(r.status).toBe('unknown');
      expect(r.attempts).toBe(1);
      expect(r.reason).toMatch(/a creating call is not re-sent/);
    }
    expect(ctx.sim.log.filter((e) => e.method === 'POST')).toHaveLength(ctx.sim.fleet.environments.size);
  });

  it('connection reset: safe calls retried, creating calls unknown and never sent twice', async () => {
    const ctx = await withWriteFaults('reset=0.3', { seed: 5 });
    const safe = await run(ctx, php);
    expect([...safe.results.values()].every((r) => r.status === 'accepted')).toBe(true);
    const created = await run(ctx, backups);
    const statuses = [...created.results.values()].map((r) => r.status);
    expect(statuses.every((s) => s === 'accepted' || s === 'unknown')).toBe(true);
    expect(statuses).toContain('unknown');
    const posts = ctx.sim.log.filter((e) => e.method === 'POST').map((e) => e.path);
    expect(new Set(posts).size).toBe(posts.length);
  });

  it('answer lost after the write was applied: a creating call ends unknown, and was applied exactly once', async () => {
    const ctx = await withWriteFaults('lost=1');
    const { results } = await run(ctx, backups);
    expect([...results.values()].every((r) => r.status === 'unknown')).toBe(true);
    for (const env of ctx.sim.fleet.environments.values()) expect(env.backups.filter((b) => b.note === 't')).toHaveLength(1);
  });

  it('malformed body: unknown (the call was answered and may have been applied), not re-sent', async () => {
    const ctx = await withWriteFaults('malformed=1');
    const { results } = await run(ctx, php);
    for (const r of results.values()) {
      expect(r.status).toBe('unknown');
      expect(r.error).toMatch(/MalformedResponseError/);
      expect(r.attempts).toBe(1);
    }
  });

  it('slow answers past the timeout: a safe call is retried', async () => {
    // undici checks timeouts on a coarse clock (about half a second), so the slow answer is much slower.
    const ctx = await withWriteFaults('slow=0.3', { seed: 9, slowMs: 2500 });
    const { results } = await run(ctx, php, { headersTimeoutMs: 200 });
    expect([...results.values()].every((r) => r.status === 'accepted')).toBe(true);
    expect([...results.values()].some((r) => r.attempts > 1)).toBe(true);
  });

  it('429 bursts: the call waits Retry-After and is retried, even a creating one, and the budget learns', async () => {
    // Retry-After in units of 50 ms (`0.05`, which the client reads): each refusal pauses the budget that long, not a second.
    const ctx = await withWriteFaults('429=0.3', { seed: 11, retryAfterUnitMs: 50 });
    const { results, budget } = await run(ctx, backups, { rate: { limit: 1000, periodMs: 1000 } });
    expect([...results.values()].every((r) => r.status === 'accepted')).toBe(true);
    expect(budget!.rateLimitedCount).toBeGreaterThan(0);
    const accepted = ctx.sim.log.filter((e) => e.status === 202).map((e) => e.path);
    expect(new Set(accepted).size).toBe(accepted.length);
  });

  it('404 and 400 fail that target only; the others go on', async () => {
    const ctx = await withWriteFaults('');
    const victim = [...ctx.sim.fleet.environments.values()][0]!;
    const running = run(ctx, php);
    // Remove one environment after the fleet was read: its call answers 404.
    await new Promise<void>((resolve) => {
      const t = setInterval(() => {
        if (ctx.sim.log.length > 0) {
          ctx.sim.fleet.environments.delete(victim.id);
          clearInterval(t);
          resolve();
        }
      }, 0);
    });
    const { results, plan } = await running;
    const failed = [...results.values()].filter((r) => r.status === 'failed');
    expect(failed.map((r) => plan.steps.find((s) => s.id === r.step_id)!.target.env_id)).toEqual([victim.id]);
    expect(failed[0]!.http_status).toBe(404);
    expect(failed[0]!.attempts).toBe(1);
    expect([...results.values()].filter((r) => r.status === 'accepted')).toHaveLength(ctx.sim.fleet.environments.size);
  });
});
