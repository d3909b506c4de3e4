import { afterEach, type TestContext } from 'vitest';
import { HostingClient } from '../../src/api/client.js';
import { startSimulator, type SimLogEntry, type Simulator, type SimulatorOptions } from '../../src/sim/server.js';

/**
 * Starts a simulator (and a client for it) that the current test file stops after each test; given a
 * test's context (`test`), when that test ends instead, for tests that run concurrently.
 */
export function useSimulator() {
  const started: { sim: Simulator; client: HostingClient }[] = [];
  afterEach(async () => {
    for (const { sim, client } of started.splice(0)) {
      await client.close();
      await sim.stop();
    }
  });
  return async (options: SimulatorOptions = {}, test?: Pick<TestContext, 'onTestFinished'>) => {
    // Scaled as the operations are: the vendor's one cache clear per 10 s would hold a restore's clear that long.
    // SITEFLEET_TEST_PROFILE=real: a test file against the real service's answers where the spec is silent.
    const profile = process.env.SITEFLEET_TEST_PROFILE === 'real' ? { profile: 'real' as const } : {};
    const sim = await startSimulator({ sites: 6, themes: 5, operationDelayMs: 50, clearCacheGapMs: 250, ...profile, ...options });
    const client = new HostingClient({ baseUrl: sim.baseUrl, token: sim.token });
    if (test)
      test.onTestFinished(async () => {
        await client.close();
        await sim.stop();
      });
    else started.push({ sim, client });
    return { sim, client };
  };
}

export const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

export async function waitFor(check: () => boolean | Promise<boolean>, timeoutMs = 5000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** The most requests the simulator saw arrive in any window of `periodMs`. */
export function busiestWindow(times: number[], periodMs: number): number {
  const sorted = [...times].sort((a, b) => a - b);
  let most = 0;
  for (let i = 0, j = 0; i < sorted.length; i++) {
    while (sorted[i]! - sorted[j]! >= periodMs) j++;
    most = Math.max(most, i - j + 1);
  }
  return most;
}

/**
 * Calls `act` once the simulator has answered the `nth` request to `endpoint` (its answer on its way,
 * before the client reads it): a moment in a run chosen by what happened, never by the clock.
 */
export function whenAnswered(sim: Simulator, endpoint: string, nth: number, act: () => void): void {
  let seen = 0;
  const push = sim.log.push.bind(sim.log);
  sim.log.push = (...entries: SimLogEntry[]) => {
    const length = push(...entries);
    for (const entry of entries) if (entry.endpoint === endpoint && ++seen === nth) queueMicrotask(act);
    return length;
  };
}
