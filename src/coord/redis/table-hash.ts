import { QUARANTINE_LINES, RETRY_LINES } from '../quarantine-file.js';
import { readLine, writeLine } from '../folded-file.js';
import { added, lineFormat, readAll, type TableFormat } from '../table-file.js';
import { clip } from '../../util/safe-text.js';
import type { QuarantineStore, RetryStore } from '../types.js';
import { companyKey } from './lock.js';
import { RedisLink, Script } from './link.js';
import { TABLE_DROP, TABLE_RECORD } from './scripts.js';

const RECORD = new Script(TABLE_RECORD);
const DROP = new Script(TABLE_DROP);

/**
 * A table store (quarantine, retry) in one Redis hash shared by every machine that names the Redis: a
 * field per entry, its line as the state folder's file writes it (quarantine-file.ts), so one format
 * serves both. Entries are added by a script; then what a release or a clear folded away is taken out,
 * so the hash holds what the file's compaction would keep (table-file.ts: what stands, and the latest
 * releases and clears, which a run's end recorded again must not undo) and no more. Taking out is
 * safe against a process adding meanwhile: an entry folded away stays folded whatever is added (a
 * later release only ever covers more). A field this store cannot read stays, and holds what it
 * names, as a file's line does. A failure stops the command as any lost coordination does
 * (CoordinationError, exit 3).
 */
async function recordHash<E, T>(link: RedisLink, key: string, format: TableFormat<E, T>, entries: readonly E[]): Promise<T> {
  const lines = lineFormat(format);
  const fieldOf = (fields: readonly string[]) => (i: number) => `the Redis hash ${key}, field ${clip(fields[i]!, 80)}`;
  const before = (await link.run(RECORD, [key], [])) as string[];
  const adding = added(format, readAll(format, before, fieldOf(before)).entries, entries).adding.map((e) => writeLine(lines, e));
  const fields = (await link.run(RECORD, [key], adding)) as string[];
  const read = readAll(format, fields, fieldOf(fields));
  const table = format.fold(read.entries);
  for (const line of read.unread) format.hold(table, line);
  const kept = new Set(format.kept(table).map((e) => writeLine(lines, e)));
  // A field is taken out when the entry it holds is no longer kept; one this store cannot read stays.
  const gone = fields.filter((f) => {
    const r = readLine(lines, f);
    return r !== undefined && 'entry' in r && !kept.has(writeLine(lines, r.entry));
  });
  if (gone.length > 0) await link.run(DROP, [key], gone);
  return table;
}

export function redisQuarantine(link: RedisLink, company: string): QuarantineStore {
  const key = companyKey(company.toLowerCase(), 'quarantine');
  return { where: key, record: (entries) => recordHash(link, key, QUARANTINE_LINES, entries) };
}

export function redisRetry(link: RedisLink, company: string): RetryStore {
  const key = companyKey(company.toLowerCase(), 'retry');
  return { where: key, record: (entries) => recordHash(link, key, RETRY_LINES, entries) };
}
