/**
 * The log files a command has open, written in buffered chunks: flushed and closed when the command
 * ends (main), also after an error. Apart from logger.ts so that every command can end without loading pino.
 */
interface Buffered {
  flushSync(): void;
  end(): void;
}

const open = new Set<Buffered>();

export function trackLogFile(destination: Buffered): void {
  open.add(destination);
}

/** Writes out what the log files of this process hold and closes them: the end of a command. */
export function flushLogs(): void {
  for (const destination of open) {
    destination.flushSync();
    destination.end();
  }
  open.clear();
}
