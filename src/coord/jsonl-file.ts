import { closeSync, constants, existsSync, fsyncSync, mkdirSync, openSync, readFileSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { StateFolderError } from '../errors.js';
import { syncFolder } from '../util/atomic-write.js';
import { isUuid } from '../util/uuid.js';

/**
 * A company's append-only record in the state folder: `<folder>/<company>.jsonl`, one JSON value a
 * line, only ever appended to. Appending needs no lock (two processes that append both keep their
 * lines), so a store built on it must read a table where each key keeps one answer whatever the
 * order of its lines (the earlier time, say).
 */
export interface JsonlFile {
  readonly path: string;
  /** Every whole line as written; a last line without its newline (cut by a crash, or being appended now) is not read. */
  read(): { lines: string[]; cutShort: boolean };
  /** One write of all lines, synced before it returns: what follows relies on it. */
  append(lines: readonly string[], afterCut: boolean): void;
}

export function companyJsonl(stateDir: string, folder: string, company: string, what: string): JsonlFile {
  // The company may come from a playbook: only a UUID names a file here.
  if (!isUuid(company)) throw new StateFolderError(`${JSON.stringify(company)} is not a company UUID: no ${what} file is named after it`);
  const dir = join(stateDir, folder);
  const path = join(dir, `${company.toLowerCase()}.jsonl`);
  return {
    path,
    read() {
      if (!existsSync(path)) return { lines: [], cutShort: false };
      const lines = readFileSync(path, 'utf8').split('\n');
      return { lines: lines.slice(0, -1), cutShort: lines.at(-1) !== '' };
    },
    append(lines, afterCut) {
      mkdirSync(dir, { recursive: true, mode: 0o700 });
      const created = !existsSync(path);
      // After a cut line, a newline first: the cut one stays one skipped line instead of spoiling the next
      // (if another process's line was only half there when read, this adds an empty line, also skipped).
      const data = Buffer.from(`${afterCut ? '\n' : ''}${lines.map((l) => `${l}\n`).join('')}`);
      const fd = openSync(path, constants.O_WRONLY | constants.O_APPEND | constants.O_CREAT | constants.O_NOFOLLOW, 0o600);
      try {
        for (let written = 0; written < data.length;) written += writeSync(fd, data, written);
        fsyncSync(fd);
      } finally {
        closeSync(fd);
      }
      if (created) syncFolder(dir);
    },
  };
}

/** A state-folder failure as the one line a command ends with (exit 2): the folder named, nothing sent. */
export function stateFolderFailure(error: unknown, what: string, path: string): StateFolderError {
  if (error instanceof StateFolderError) return error;
  const why = (error as NodeJS.ErrnoException).code ?? (error as Error).message;
  return new StateFolderError(`cannot record ${what} in ${path} (${why}): give --state-dir a folder this user can write; nothing was sent`, { cause: error });
}
