import { closeSync, constants, fstatSync, openSync, readSync, realpathSync } from 'node:fs';
import { isAbsolute, relative, resolve, sep } from 'node:path';

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

/**
 * The files a playbook may name (an IP list): inside the playbook's folder, or listed by the person
 * who runs it (`--allow-outside FILE`, or an absolute path under `settings.allowed_files`). A pull
 * request that points `ip_list_file` at `/etc/shadow` or `../../.ssh/id_rsa` is refused before a byte
 * is read, and a link inside the folder to a file outside it is refused as the file it leads to.
 */
export class PlaybookFiles {
  readonly #allowed: Set<string>;

  constructor(
    /** The playbook's folder: names are relative to it. */
    readonly baseDir: string,
    allowed: readonly string[] = [],
  ) {
    this.#allowed = new Set(allowed.flatMap((file) => [resolve(file), realOrSelf(resolve(file))]));
  }

  /** The absolute path of a file the playbook names, if it may be read; else InputFileError saying how to allow it. */
  resolve(name: string): string {
    const path = resolve(this.baseDir, name);
    if (this.#allowed.has(path)) return path;
    const how = `pass --allow-outside ${path} or list it under settings.allowed_files to read it`;
    if (!inside(resolve(this.baseDir), path)) throw new InputFileError(`${name} is outside the playbook's folder: ${how}`);
    const real = realOrSelf(path);
    if (!this.#allowed.has(real) && !inside(realOrSelf(resolve(this.baseDir)), real))
      throw new InputFileError(`${name} is a link to a file outside the playbook's folder: ${how}`);
    return path;
  }

  /** Reads a file the playbook names (see `resolve` and `readInputFile`). */
  read(name: string, maxBytes: number): { path: string; text: string } {
    const path = this.resolve(name);
    return { path, text: readInputFile(path, maxBytes) };
  }
}

function inside(folder: string, path: string): boolean {
  const rel = relative(folder, path);
  return rel !== '' && rel !== '..' && !rel.startsWith(`..${sep}`) && !isAbsolute(rel);
}

/** The path with every link followed, or the path itself when it does not exist (reading it then says so). */
function realOrSelf(path: string): string {
  try {
    return realpathSync(path);
  } catch {
    return path;
  }
}
