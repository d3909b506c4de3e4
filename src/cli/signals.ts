/**
 * Ctrl-C and SIGTERM for a command that sends or polls: the first one calls `first` (start nothing
 * new, let what is in flight end, save); a second one exits 130 at once (the journal has everything).
 * Returns the function that removes the handlers.
 */
export function onInterrupt(first: (signal: NodeJS.Signals) => void): () => void {
  let count = 0;
  const handler = (signal: NodeJS.Signals) => {
    count++;
    if (count > 1) process.exit(130);
    first(signal);
  };
  process.on('SIGINT', handler);
  process.on('SIGTERM', handler);
  return () => {
    process.off('SIGINT', handler);
    process.off('SIGTERM', handler);
  };
}
