import type { SimLogEntry, Simulator } from '../../src/sim/server.js';

/**
 * Calls `act` once, as soon as `happened()` holds after the simulator logged a request (its answer
 * on its way, before the client reads it): a moment in a run chosen by what the simulator saw, never
 * by a clock, nor by a test polling it (a loop polling every 20 ms needed the moment to last). Returns
 * whether it came.
 */
export function whenSeen(sim: Simulator, happened: () => boolean, act: () => void): () => boolean {
  let seen = false;
  const push = sim.log.push.bind(sim.log);
  sim.log.push = (...entries: SimLogEntry[]) => {
    const length = push(...entries);
    if (!seen && happened()) {
      seen = true;
      queueMicrotask(act);
    }
    return length;
  };
  return () => seen;
}
