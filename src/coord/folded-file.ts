import type { JsonlFile } from './jsonl-file.js';

/**
 * A store whose table keeps, of each key, the entry with the earliest time (first-seen times, what
 * staging ran): the fold rules of inventory/first-seen.ts and inventory/staging-table.ts. Written as one
 * JSON object a line with its format version (`"v":1`); a line without one was written by a release
 * before versions and reads as 1. A line of a later format is kept as it is (never dropped by a
 * compaction) but not read: its key's clock starts again, which holds an update longer, never sends
 * one sooner.
 */
export interface LineFormat<E> {
  /** The entry a line's fields hold (without `v`); undefined for one that is not an entry of this store. */
  fromRecord(record: Record<string, unknown>): E | undefined;
  toRecord(entry: E): Record<string, unknown>;
  /** What one time is kept for. */
  key(entry: E): string;
  at(entry: E): number;
}

/** The format this release writes. */
export const FORMAT = 1;

/** Past this many lines a file may be compacted (when it also holds more than twice the lines its table needs). */
export const COMPACT_ABOVE = 1000;

type ReadLine<E> = { entry: E } | { later: string } | undefined;

export function readLine<E>(format: LineFormat<E>, line: string): ReadLine<E> {
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch {
    return undefined;
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return undefined;
  const { v, ...fields } = value as Record<string, unknown>;
  if (v === undefined || v === FORMAT) {
    const entry = format.fromRecord(fields);
    return entry === undefined ? undefined : { entry };
  }
  return Number.isInteger(v) && (v as number) > FORMAT ? { later: line } : undefined;
}

export function writeLine<E>(format: LineFormat<E>, entry: E): string {
  return JSON.stringify({ v: FORMAT, ...format.toRecord(entry) });
}

/** The earliest entry of each key; of two with one time the first stays (as the tables fold them). */
class Earliest<E> {
  readonly byKey = new Map<string, E>();
  constructor(readonly format: LineFormat<E>) {}

  add(entry: E): void {
    const key = this.format.key(entry);
    const known = this.byKey.get(key);
    if (known === undefined || this.format.at(entry) < this.format.at(known)) this.byKey.set(key, entry);
  }

  /** Whether `entry` is what stands for its key. */
  stands(entry: E): boolean {
    return this.byKey.get(this.format.key(entry)) === entry;
  }
}

/** The entries of `lines` folded, and the lines of later formats (kept as they are, once each). */
function fold<E>(format: LineFormat<E>, lines: readonly string[]): { table: Earliest<E>; later: Set<string> } {
  const table = new Earliest(format);
  const later = new Set<string>();
  for (const line of lines) {
    const read = readLine(format, line);
    if (read && 'entry' in read) table.add(read.entry);
    else if (read) later.add(read.later);
  }
  return { table, later };
}

/**
 * Adds to the file only the entries it lacks (an entry whose key already holds an earlier or equal
 * time adds nothing), and returns every entry that stands. A file past `compactAbove` lines that holds
 * more than twice the lines its table needs is rewritten with those alone (JsonlFile.compact).
 */
export function recordFolded<E>(file: JsonlFile, format: LineFormat<E>, entries: readonly E[], compactAbove = COMPACT_ABOVE): E[] {
  const { lines, cutShort } = file.read();
  const { table, later } = fold(format, lines);
  for (const e of entries) table.add(e);
  const lacking = [...new Set(entries.filter((e) => table.stands(e)))];
  file.append(
    lacking.map((e) => writeLine(format, e)),
    cutShort,
  );
  const worth = (count: number, needed: number) => count > Math.max(compactAbove, 2 * needed);
  if (worth(lines.length + lacking.length, table.byKey.size + later.size))
    file.compact((now) => {
      // Folded again from what the file holds now: another process may have appended since.
      const again = fold(format, now);
      if (!worth(now.length, again.table.byKey.size + again.later.size)) return undefined;
      return [...[...again.table.byKey.values()].map((e) => writeLine(format, e)), ...again.later];
    });
  return [...table.byKey.values()];
}
