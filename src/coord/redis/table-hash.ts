import { QUARANTINE_LINES, RETRY_LINES } from '../quarantine-file.js';
import { readLine, writeLine, type LineFormat } from '../folded-file.js';
import { added, type TableFormat } from '../table-file.js';
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
 * together with the release or clear itself, so the hash holds what stands and no more. Taking out is
 * safe against a process adding meanwhile: an entry folded away stays folded whatever is added (a
 * release only ever covers more); an old break added after its release left is quarantined again,
 * the safe side. A failure stops the command as any lost coordination does (CoordinationError, exit 3).
 */
async function recordHash<E, T>(link: RedisLink, key: string, format: TableFormat<E, T>, entries: readonly E[]): Promise<T> {
  const lines = lineFormat(format);
  const known = read(lines, (await link.run(RECORD, [key], [])) as string[]);
  const adding = added(format, known, entries).adding.map((e) => writeLine(lines, e));
  const fields = (await link.run(RECORD, [key], adding)) as string[];
  const table = format.fold(read(lines, fields));
  const kept = new Set(format.standing(table).map((e) => writeLine(lines, e)));
  // A field is taken out when the entry it holds no longer stands; one this store cannot read (a later format) stays.
  const gone = fields.filter((f) => {
    const r = readLine(lines, f);
    return r !== undefined && 'entry' in r && !kept.has(writeLine(lines, r.entry));
  });
  if (gone.length > 0) await link.run(DROP, [key], gone);
  return table;
}

function read<E>(lines: LineFormat<E>, fields: readonly string[]): E[] {
  return fields.flatMap((f) => {
    const r = readLine(lines, f);
    return r && 'entry' in r ? [r.entry] : [];
  });
}

function lineFormat<E, T>(format: TableFormat<E, T>): LineFormat<E> {
  return { fromRecord: format.fromRecord, toRecord: format.toRecord, key: () => '', at: () => 0 };
}

export function redisQuarantine(link: RedisLink, company: string): QuarantineStore {
  const key = companyKey(company.toLowerCase(), 'quarantine');
  return { where: key, record: (entries) => recordHash(link, key, QUARANTINE_LINES, entries) };
}

export function redisRetry(link: RedisLink, company: string): RetryStore {
  const key = companyKey(company.toLowerCase(), 'retry');
  return { where: key, record: (entries) => recordHash(link, key, RETRY_LINES, entries) };
}
