import type { Io } from './io.js';

/**
 * Ctrl-C and SIGTERM for a command that sends or polls: the first one calls `first` (start nothing
 * new, let what is in flight end, save); a second one exits 130 at once (the journal has everything).
 * Returns the function that removes the handlers.
 */
export function onInterrupt(io: Pick<Io, 'signals' | 'exitNow'>, first: (signal: NodeJS.Signals) => void): () => void {
  let count = 0;
  const handler = (signal: NodeJS.Signals) => {
    count++;
    if (count > 1) io.exitNow(130);
    first(signal);
  };
  io.signals.on('SIGINT', handler);
  io.signals.on('SIGTERM', handler);
  return () => {
    io.signals.off('SIGINT', handler);
    io.signals.off('SIGTERM', handler);
  };
}
