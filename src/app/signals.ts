import { setMaxListeners } from 'node:events';
import type { Io } from './io.js';

/**
 * Ctrl-C and SIGTERM for a command that sends or polls: the first one calls `first` (start nothing
 * new, let what is under way finish, save); a second one calls `second` (halt: what is under way
 * stops where it stands) and exits 130 at once (the journal has every transition so far).
 * Returns the function that removes the handlers.
 */
export function onInterrupt(io: Pick<Io, 'signals' | 'exitNow'>, first: (signal: NodeJS.Signals) => void, second?: () => void): () => void {
  let count = 0;
  const handler = (signal: NodeJS.Signals) => {
    count++;
    if (count > 1) {
      second?.();
      io.exitNow(130);
    }
    first(signal);
  };
  io.signals.on('SIGINT', handler);
  io.signals.on('SIGTERM', handler);
  return () => {
    io.signals.off('SIGINT', handler);
    io.signals.off('SIGTERM', handler);
  };
}

/**
 * A stop many waits share: each wait on it (a sleep between checks, a call queued on the rate budget, a
 * poll, a browser's wait) adds one abort listener and removes it when it ends, so a run with more than
 * ten lives under way holds more than ten at once, legitimately: Node's warning, meant for a leak, is
 * lifted for this signal alone (as the run's own stop does, run/run-stop.ts).
 */
export function sharedStop(): AbortController {
  const controller = new AbortController();
  setMaxListeners(0, controller.signal);
  return controller;
}
