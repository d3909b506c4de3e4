import { describe, expect, it } from 'vitest';
import type { RunEvent } from '../../src/run/types.js';
import { runInProcess } from '../helpers/run.js';
import { useSimulator } from '../helpers/sim.js';

const start = useSimulator();

/**
 * The read-back judges a wave's writes at once; their records go to the journal together, so it
 * writes them with one sync. One sync a record (a few ms each) held a night of 500 environments'
 * 4,600 pinned writes seconds between its read-back and its next call (bench scenario 32).
 */
describe("a wave's read-back records its writes together", () => {
  it('every write read back is handed to the journal before the first is written', async () => {
    const { sim } = await start({ sites: 4, seed: 3, pluginsPerEnv: 12, operationDelayMs: 20 });
    let pending = 0;
    let most = 0;
    let readBack = 0;
    const onEvent = (event: RunEvent) => {
      if (event.type !== 'update' || event.result.runs === undefined) return;
      readBack++;
      pending++;
      most = Math.max(most, pending);
      // As the journal does: written a moment later, with every record handed over meanwhile.
      return new Promise<void>((resolve) =>
        setTimeout(() => {
          pending--;
          resolve();
        }, 5),
      );
    };
    const { plan } = await runInProcess(sim, 'tasks:\n  - { name: plugins, action: plugins.update, target: all, with: { max_bump: minor }, wait: true }\n', {
      onEvent,
    });
    const writes = plan.steps.filter((s) => s.endpoint === 'updatePlugin').length;
    expect(writes).toBeGreaterThan(10);
    expect(readBack).toBe(writes);
    expect(most).toBe(writes);
  }, 60_000);
});
