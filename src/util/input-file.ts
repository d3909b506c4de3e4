import { closeSync, constants, fstatSync, openSync, readSync } from 'node:fs';

/** Why an input file was not read: a sentence for the user, naming no contents. */
export class InputFileError extends Error {
  override name = 'InputFileError';
}

/**
 * Reads a file the user named (a playbook, an IP list) only if it is a regular file of at most
 * `maxBytes`. `/dev/zero`, a FIFO or a 4 GB file is refused before a byte is read: opening is
 * non-blocking, so a FIFO cannot hang the command, and the size is checked on the open file itself.
 */
export function readInputFile(path: string, maxBytes: number): string {
  let fd: number;
  try {
    fd = openSync(path, constants.O_RDONLY | constants.O_NONBLOCK);
  } catch (error) {
    throw new InputFileError(`cannot read ${path}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`);
  }
  try {
    const stat = fstatSync(fd);
    if (!stat.isFile()) throw new InputFileError(`${path} is not a regular file`);
    if (stat.size > maxBytes) throw new InputFileError(`${path} is ${formatBytes(stat.size)}, more than the ${formatBytes(maxBytes)} allowed`);
    const buffer = Buffer.alloc(stat.size);
    let read = 0;
    while (read < stat.size) {
      const n = readSync(fd, buffer, read, stat.size - read, read);
      if (n === 0) break;
      read += n;
    }
    return buffer.subarray(0, read).toString('utf8');
  } finally {
    closeSync(fd);
  }
}

export function formatBytes(n: number): string {
  return n >= 1 << 20 ? `${(n / (1 << 20)).toFixed(1)} MiB` : n >= 1024 ? `${Math.round(n / 1024)} KiB` : `${n} bytes`;
}

/** The first characters of a line of a user's file, for an error message: never a whole line of a file that may hold secrets. */
export function quoteStart(text: string, chars = 24): string {
  return JSON.stringify(text.length > chars ? `${text.slice(0, chars)}…` : text);
}
