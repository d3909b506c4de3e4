import type { UnreadLine } from '../inventory/unread-line.js';
import { COMPACT_ABOVE, readLine, writeLine, type LineFormat } from './folded-file.js';
import type { JsonlFile } from './jsonl-file.js';
import { lineNames } from './line-names.js';

/**
 * A store whose entries can also take earlier ones away (a release of a quarantined version, a
 * retry's clear), unlike folded-file.ts whose keys only ever keep their earliest time. Lines are
 * appended, never rewritten in place (jsonl-file.ts: two processes that append both keep their lines);
 * the table folds them whatever their order; a compaction rewrites the file with what still stands
 * and the releases and clears that folded the rest away (a run's end recorded again later must stay
 * folded), so what a release folded away leaves the file: the store does not only grow.
 *
 * A line this release cannot read (not JSON, not an entry, or of a later format) is never dropped,
 * not even by a compaction, and never read as nothing: the table holds what it names (`hold`), and
 * the commands warn naming its file and line (app/withheld-record.ts). An empty line names nothing
 * and is skipped (an append after a cut line may leave one).
 */
export interface TableFormat<E, T> extends Omit<LineFormat<E>, 'key' | 'at'> {
  /** The table of entries, folded whatever their order. */
  fold(entries: readonly E[]): T;
  /** Whether `entry` would change `table` (an entry it already holds, or one folded away already, is not appended again). */
  adds(table: T, entry: E): boolean;
  /** Adds `entry` to `table`, in place. */
  add(table: T, entry: E): void;
  /** What a compaction writes: the entries that still count in `table`, and the events that must outlive what they folded away. */
  kept(table: T): E[];
  /** Holds what a line it cannot read names, in place. */
  hold(table: T, line: UnreadLine): void;
}

/** Appends the entries that change the table, compacts when worth it, and returns the table as it stands after. */
export function recordTable<E, T>(file: JsonlFile, format: TableFormat<E, T>, entries: readonly E[], compactAbove = COMPACT_ABOVE): T {
  const { lines, cutShort } = file.read();
  const read = readAll(format, lines, (i) => `${file.path} line ${i + 1}`);
  const { table, adding } = added(format, read.entries, entries);
  for (const line of read.unread) format.hold(table, line);
  file.append(
    adding.map((e) => writeLine(lineFormat(format), e)),
    cutShort,
  );
  const worth = (count: number, needed: number) => count > Math.max(compactAbove, 2 * needed);
  if (worth(lines.length + adding.length, format.kept(table).length + read.asIs.length))
    file.compact((now) => {
      // Folded again from what the file holds now: another process may have appended since.
      const again = readAll(format, now, () => '');
      const kept = format.kept(format.fold(again.entries));
      if (!worth(now.length, kept.length + again.asIs.length)) return undefined;
      return [...kept.map((e) => writeLine(lineFormat(format), e)), ...again.asIs];
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

/**
 * The entries of `lines`, and the lines it cannot read: kept as they are by a compaction (`asIs`, once
 * each), and what each names (`unread`, placed by `where(index)`: its file and line, its Redis field).
 */
export function readAll<E, T>(
  format: TableFormat<E, T>,
  lines: readonly string[],
  where: (index: number) => string,
): { entries: E[]; asIs: string[]; unread: UnreadLine[] } {
  const entries: E[] = [];
  const asIs = new Set<string>();
  const unread: UnreadLine[] = [];
  for (const [i, line] of lines.entries()) {
    if (line.trim() === '') continue;
    const read = readLine(lineFormat(format), line);
    if (read && 'entry' in read) {
      entries.push(read.entry);
      continue;
    }
    asIs.add(line);
    const why = read ? 'written by a later release of sitefleet' : 'not an entry this release can read';
    unread.push({ where: where(i), why, ...lineNames(line) });
  }
  return { entries, asIs: [...asIs], unread };
}

/** The line half of a table format, as folded-file.ts reads and writes lines (its key and time are not used here). */
export function lineFormat<E, T>(format: TableFormat<E, T>): LineFormat<E> {
  return { fromRecord: format.fromRecord, toRecord: format.toRecord, key: () => '', at: () => 0 };
}
