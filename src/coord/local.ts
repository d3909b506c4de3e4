import { quarantineFile, retryFile } from './quarantine-file.js';
import { acquireLock } from './file-lock.js';
import { firstSeenFile } from './first-seen-file.js';
import { stagingFile } from './staging-file.js';
import type { Coordination } from './types.js';

/**
 * Nothing shared beyond this machine: the lock is a file under the state directory, the budget is the
 * process's own (it learns the limit from 429s by itself), the run's own environment turns order
 * its writes, and first-seen times of theme versions are a file under the state directory.
 */
export function localCoordination(stateDir: string): Coordination {
  return {
    lost: new AbortController().signal,
    lock: (scope, options) => acquireLock(stateDir, scope, options),
    sharedWindow: () => undefined,
    busy: () => undefined,
    firstSeen: (company) => firstSeenFile(stateDir, company),
    staging: (company) => stagingFile(stateDir, company),
    quarantine: (company) => quarantineFile(stateDir, company),
    retries: (company) => retryFile(stateDir, company),
    close: () => Promise.resolve(),
  };
}
