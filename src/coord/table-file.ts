import { COMPACT_ABOVE, readLine, writeLine, type LineFormat } from './folded-file.js';
import type { JsonlFile } from './jsonl-file.js';

/**
 * A store whose entries can also take earlier ones away (a release of a quarantined version, a
 * retry's clear), unlike folded-file.ts whose keys only ever keep their earliest time. Lines are
 * appended, never rewritten in place (jsonl-file.ts: two processes that append both keep their lines);
 * the table folds them whatever their order; a compaction rewrites the file with only what still
 * stands, so what a release folded away leaves the file, and the release with it: the store does not
 * only grow. A line of a later format is kept as it is and not read (as folded-file.ts).
 */
export interface TableFormat<E, T> extends Omit<LineFormat<E>, 'key' | 'at'> {
  /** The table of entries, folded whatever their order. */
  fold(entries: readonly E[]): T;
  /** Whether `entry` would change `table` (an entry it already holds is not appended again). */
  adds(table: T, entry: E): boolean;
  /** Adds `entry` to `table`, in place. */
  add(table: T, entry: E): void;
  /** The entries that still count in `table`: what a compaction writes. */
  standing(table: T): E[];
}

/** Appends the entries that change the table, compacts when worth it, and returns the table as it stands after. */
export function recordTable<E, T>(file: JsonlFile, format: TableFormat<E, T>, entries: readonly E[], compactAbove = COMPACT_ABOVE): T {
  const { lines, cutShort } = file.read();
  const read = readAll(format, lines);
  const { table, adding } = added(format, read.entries, entries);
  file.append(
    adding.map((e) => writeLine(lineFormat(format), e)),
    cutShort,
  );
  const worth = (count: number, needed: number) => count > Math.max(compactAbove, 2 * needed);
  if (worth(lines.length + adding.length, format.standing(table).length + read.later.length))
    file.compact((now) => {
      // Folded again from what the file holds now: another process may have appended since.
      const again = readAll(format, now);
      const kept = format.standing(format.fold(again.entries));
      if (!worth(now.length, kept.length + again.later.length)) return undefined;
      return [...kept.map((e) => writeLine(lineFormat(format), e)), ...again.later];
    });
  return table;
}

/** The table of `known` with `entries` added, and those of them that changed it (an end recorded again, by a resume or each `status`, changes nothing). */
export function added<E, T>(format: TableFormat<E, T>, known: readonly E[], entries: readonly E[]): { table: T; adding: E[] } {
  const table = format.fold(known);
  const adding = entries.filter((e) => {
    if (!format.adds(table, e)) return false;
    format.add(table, e);
    return true;
  });
  return { table, adding };
}

function readAll<E, T>(format: TableFormat<E, T>, lines: readonly string[]): { entries: E[]; later: string[] } {
  const entries: E[] = [];
  const later = new Set<string>();
  for (const line of lines) {
    const read = readLine(lineFormat(format), line);
    if (read && 'entry' in read) entries.push(read.entry);
    else if (read) later.add(read.later);
  }
  return { entries, later: [...later] };
}

/** The line half of a table format, as folded-file.ts reads and writes lines (its key and time are not used here). */
function lineFormat<E, T>(format: TableFormat<E, T>): LineFormat<E> {
  return { fromRecord: format.fromRecord, toRecord: format.toRecord, key: () => '', at: () => 0 };
}
