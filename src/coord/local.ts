import { acquireLock } from './file-lock.js';
import type { Coordination } from './types.js';

/**
 * Nothing shared beyond this machine: the lock is a file under the state directory, the budget is the
 * process's own (it learns the limit from 429s by itself) and the run's own environment turns order
 * its writes.
 */
export function localCoordination(stateDir: string): Coordination {
  return {
    lost: new AbortController().signal,
    lock: (scope, options) => acquireLock(stateDir, scope, options),
    sharedWindow: () => undefined,
    busy: () => undefined,
    close: () => Promise.resolve(),
  };
}
