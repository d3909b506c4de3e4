import { closeSync, constants, existsSync, fsyncSync, mkdirSync, openSync, readFileSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { StateFolderError } from '../errors.js';
import { FirstSeen, type FirstSighting, type Sighting } from '../inventory/first-seen.js';
import { syncFolder } from '../util/atomic-write.js';
import { isUuid } from '../util/uuid.js';
import type { FirstSeenStore } from './types.js';

/**
 * A company's first-seen times in the state folder: `first-seen/<company>.jsonl`, one line per
 * sighting (`{"theme","version","first_seen"}`), only ever appended to. Appending needs no lock: two
 * processes that append the same version both keep it, and reading takes the earlier time, so a time
 * never moves later and no process can lose another's line (as a read-modify-write would).
 */
export function firstSeenFile(stateDir: string, company: string): FirstSeenStore {
  // The company may come from a playbook: only a UUID names a file here.
  if (!isUuid(company)) throw new StateFolderError(`${JSON.stringify(company)} is not a company UUID: no first-seen file is named after it`);
  const dir = join(stateDir, 'first-seen');
  const path = join(dir, `${company.toLowerCase()}.jsonl`);
  return {
    where: path,
    record(sightings, at) {
      try {
        mkdirSync(dir, { recursive: true, mode: 0o700 });
        const { table, cutShort } = readTable(path);
        const added = table.missing(sightings, at);
        if (added.length > 0) append(path, added, at, cutShort);
        return Promise.resolve(FirstSeen.of([...table.entries(), ...added.map((s) => ({ ...s, at }))]));
      } catch (error) {
        if (error instanceof StateFolderError) throw error;
        const why = (error as NodeJS.ErrnoException).code ?? (error as Error).message;
        throw new StateFolderError(`cannot record first-seen times in ${path} (${why}): give --state-dir a folder this user can write; nothing was sent`, {
          cause: error,
        });
      }
    },
  };
}

/**
 * The table as the file holds it, and whether its last line lacks its newline. Such a line was cut by
 * a crash while it was appended (before any plan used it), or is being appended right now: either way
 * it is not read. Any line that is not a sighting is skipped too: its version's clock starts again,
 * which holds an update longer, never sends one sooner.
 */
function readTable(path: string): { table: FirstSeen; cutShort: boolean } {
  if (!existsSync(path)) return { table: new FirstSeen(), cutShort: false };
  const lines = readFileSync(path, 'utf8').split('\n');
  const cutShort = lines.at(-1) !== '';
  const sightings = lines.slice(0, -1).flatMap((line) => sightingOf(line) ?? []);
  return { table: FirstSeen.of(sightings), cutShort };
}

function sightingOf(line: string): FirstSighting | undefined {
  try {
    const { theme, version, first_seen } = JSON.parse(line) as Record<string, unknown>;
    const at = typeof first_seen === 'string' ? Date.parse(first_seen) : NaN;
    return typeof theme === 'string' && typeof version === 'string' && Number.isFinite(at) ? { theme, version, at } : undefined;
  } catch {
    return undefined;
  }
}

/** One write of all new lines, synced before it returns: the plan that follows relies on it. */
function append(path: string, added: readonly Sighting[], at: number, afterCut: boolean): void {
  const created = !existsSync(path);
  const first_seen = new Date(at).toISOString();
  const lines = added.map(({ theme, version }) => `${JSON.stringify({ theme, version, first_seen })}\n`).join('');
  // After a cut line, a newline first: the cut one stays one skipped line instead of spoiling the next
  // (if another process's line was only half there when read, this adds an empty line, also skipped).
  const data = Buffer.from(`${afterCut ? '\n' : ''}${lines}`);
  const fd = openSync(path, constants.O_WRONLY | constants.O_APPEND | constants.O_CREAT | constants.O_NOFOLLOW, 0o600);
  try {
    for (let written = 0; written < data.length;) written += writeSync(fd, data, written);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  if (created) syncFolder(join(path, '..'));
}
