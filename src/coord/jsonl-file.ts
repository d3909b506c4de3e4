import { closeSync, constants, fstatSync, fsyncSync, lstatSync, mkdirSync, openSync, readSync, renameSync, unlinkSync, writeSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { dirname, join } from 'node:path';
import { StateFolderError } from '../errors.js';
import { syncFolder, writeNewFile } from '../util/atomic-write.js';
import { isUuid } from '../util/uuid.js';
import { tryLockFile } from './file-lock.js';

/**
 * A company's record in the state folder: `<folder>/<company>.jsonl`, one JSON value a line. Lines are
 * appended with no lock (two processes that append both keep their lines), so a store built on it must
 * read a table where each key keeps one answer whatever the order of its lines (the earlier time, say).
 * Now and then the file is rewritten smaller (`compact`): under a lock of its own, and so that no line
 * another process appends meanwhile is lost (see `compact` and `append`).
 */
export interface JsonlFile {
  readonly path: string;
  /** Every whole line as written; a last line without its newline (cut by a crash, or being appended now) is not read. */
  read(): { lines: string[]; cutShort: boolean };
  /** One write of all lines, synced before it returns: what follows relies on it. */
  append(lines: readonly string[], afterCut: boolean): void;
  /**
   * Replaces the file by `rewrite(lines)` of its whole lines, atomically (a temporary file, fsync'd and
   * renamed over it), unless `rewrite` returns undefined (not worth it), another process is compacting
   * it, or the path is not the regular file it was. Lines appended by others meanwhile are carried over.
   */
  compact(rewrite: (lines: readonly string[]) => string[] | undefined): boolean;
}

/** A replaced file is appended to again at most this many times in a row (each means another compaction ran meanwhile). */
const APPEND_TRIES = 8;

export function companyJsonl(stateDir: string, folder: string, company: string, what: string): JsonlFile {
  // The company may come from a playbook: only a UUID names a file here.
  if (!isUuid(company)) throw new StateFolderError(`${JSON.stringify(company)} is not a company UUID: no ${what} file is named after it`);
  const dir = join(stateDir, folder);
  const path = join(dir, `${company.toLowerCase()}.jsonl`);
  const append = (lines: readonly string[], afterCut: boolean) => appendLines(dir, path, lines, afterCut);
  return {
    path,
    read() {
      const fd = openRead(path);
      if (fd === undefined) return { lines: [], cutShort: false };
      try {
        return wholeLines(readFrom(fd, 0).toString('utf8'));
      } finally {
        closeSync(fd);
      }
    },
    append,
    compact: (rewrite) => compactFile(path, rewrite, append),
  };
}

/**
 * Appends with O_APPEND (never through a link), then checks that the file written is still the one at
 * the path: if a compaction renamed a new file over it after this write, the write may have landed in
 * the old file after the compaction had read it, so the lines go to the new one too (a line twice
 * changes nothing in a table that keeps the earliest time).
 */
function appendLines(dir: string, path: string, lines: readonly string[], afterCut: boolean): void {
  if (lines.length === 0) return;
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  // After a cut line, a newline first: the cut one stays one skipped line instead of spoiling the next
  // (if another process's line was only half there when read, this adds an empty line, also skipped).
  let cut = afterCut;
  for (let attempt = 1; ; attempt++) {
    const created = !exists(path);
    const data = Buffer.from(`${cut ? '\n' : ''}${lines.map((l) => `${l}\n`).join('')}`);
    const fd = openSync(path, constants.O_WRONLY | constants.O_APPEND | constants.O_CREAT | constants.O_NOFOLLOW, 0o600);
    let replaced: boolean;
    try {
      for (let written = 0; written < data.length;) written += writeSync(fd, data, written);
      fsyncSync(fd);
      replaced = !sameFile(fstatSync(fd), path);
    } finally {
      closeSync(fd);
    }
    if (created) syncFolder(dir);
    if (!replaced) return;
    if (attempt >= APPEND_TRIES) throw new StateFolderError(`${path} was replaced ${attempt} times while appending to it`);
    cut = true;
  }
}

/**
 * One compaction at a time per file (a lock file beside it; a busy one means skip, not wait). Reads
 * the whole lines through one descriptor, writes what `rewrite` makes of them to a temporary file
 * (created exclusively, mode 0600), fsyncs it, and renames it over the path if the path is still the
 * file read. Then reads, through the same descriptor, what was appended to the old file since, and
 * appends its whole lines to the new one: a line written before the rename is found there, and its
 * writer, finding the path replaced after its write, appends it again (`appendLines`).
 */
function compactFile(path: string, rewrite: (lines: readonly string[]) => string[] | undefined, append: (lines: readonly string[], afterCut: boolean) => void) {
  if (!exists(path)) return false;
  const release = tryLockFile(`${path}.lock`, 'compaction');
  if (!release) return false;
  try {
    const fd = openRead(path);
    if (fd === undefined) return false;
    try {
      const read = readFrom(fd, 0);
      const whole = read.lastIndexOf(0x0a) + 1;
      const text = rewrite(wholeLines(read.subarray(0, whole).toString('utf8')).lines);
      if (text === undefined) return false;
      const tmp = `${path}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`;
      writeNewFile(tmp, text.map((l) => `${l}\n`).join(''), 0o600);
      if (!sameFile(fstatSync(fd), path)) {
        unlinkSync(tmp);
        return false;
      }
      renameSync(tmp, path);
      syncFolder(dirname(path));
      append(wholeLines(readFrom(fd, whole).toString('utf8')).lines, false);
      return true;
    } finally {
      closeSync(fd);
    }
  } finally {
    release();
  }
}

/** The file opened for reading, never through a link; undefined when there is none. Anything but a regular file is refused. */
function openRead(path: string): number | undefined {
  let fd: number;
  try {
    fd = openSync(path, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
  if (!fstatSync(fd).isFile()) {
    closeSync(fd);
    throw new StateFolderError(`${path} is not a regular file: it is not a store sitefleet wrote`);
  }
  return fd;
}

/** Every byte from `offset` to the end. */
function readFrom(fd: number, offset: number): Buffer {
  const chunks: Buffer[] = [];
  for (let at = offset; ;) {
    const chunk = Buffer.alloc(1 << 16);
    const n = readSync(fd, chunk, 0, chunk.length, at);
    if (n === 0) break;
    chunks.push(chunk.subarray(0, n));
    at += n;
  }
  return Buffer.concat(chunks);
}

function wholeLines(text: string): { lines: string[]; cutShort: boolean } {
  if (text === '') return { lines: [], cutShort: false };
  const lines = text.split('\n');
  return { lines: lines.slice(0, -1), cutShort: lines.at(-1) !== '' };
}

function exists(path: string): boolean {
  try {
    lstatSync(path);
    return true;
  } catch {
    return false;
  }
}

/** Whether the path (not followed) is still the file the descriptor's stat describes. */
function sameFile(opened: { dev: number; ino: number }, path: string): boolean {
  try {
    const now = lstatSync(path);
    return now.dev === opened.dev && now.ino === opened.ino;
  } catch {
    return false;
  }
}

/** A state-folder failure as the one line a command ends with (exit 2): the folder named, nothing sent. */
export function stateFolderFailure(error: unknown, what: string, path: string): StateFolderError {
  if (error instanceof StateFolderError) return error;
  const why = (error as NodeJS.ErrnoException).code ?? (error as Error).message;
  return new StateFolderError(`cannot record ${what} in ${path} (${why}): give --state-dir a folder this user can write; nothing was sent`, { cause: error });
}
