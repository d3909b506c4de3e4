import { itemOf, refOf } from '../inventory/kinds.js';
import { versionKey } from '../util/item-version.js';
import { QuarantineTable, isRelease, type QuarantineEntry } from '../inventory/quarantine-table.js';
import { RetryTable, isClear, type RetryEntry } from '../inventory/retry-table.js';
import { companyJsonl, stateFolderFailure } from './jsonl-file.js';
import { recordTable, type TableFormat } from './table-file.js';
import type { QuarantineStore, RetryStore } from './types.js';

/**
 * A company's quarantined item versions in the state folder, `quarantine/<company>.jsonl`, and its
 * writes waiting to be tried again, `retry/<company>.jsonl`: one entry a line (jsonl-file.ts), appended
 * only when it changes the table, compacted to what still stands (table-file.ts). Written after a
 * run's steps end (app/withheld-record.ts) and by `sitefleet quarantine release` / `retry clear`.
 */
export function quarantineFile(stateDir: string, company: string, options: { compactAbove?: number } = {}): QuarantineStore {
  const file = companyJsonl(stateDir, 'quarantine', company, 'quarantine');
  return {
    where: file.path,
    record(entries) {
      try {
        return Promise.resolve(recordTable(file, QUARANTINE_LINES, entries, options.compactAbove));
      } catch (error) {
        throw stateFolderFailure(error, 'quarantined versions', file.path);
      }
    },
  };
}

export function retryFile(stateDir: string, company: string, options: { compactAbove?: number } = {}): RetryStore {
  const file = companyJsonl(stateDir, 'retry', company, 'retry');
  return {
    where: file.path,
    record(entries) {
      try {
        return Promise.resolve(recordTable(file, RETRY_LINES, entries, options.compactAbove));
      } catch (error) {
        throw stateFolderFailure(error, 'writes to try again later', file.path);
      }
    },
  };
}

const str = (v: unknown): v is string => typeof v === 'string';
const time = (v: unknown) => (str(v) ? Date.parse(v) : NaN);
/** The optional display names, as given. */
const names = (r: Record<string, unknown>) => ({ ...(str(r.site) ? { site: r.site } : {}), ...(str(r.environment) ? { environment: r.environment } : {}) });

/** A break or a release as a line, times in ISO 8601. A line that is not one holds what it names (table-file.ts). */
export const QUARANTINE_LINES: TableFormat<QuarantineEntry, QuarantineTable> = {
  fromRecord(r) {
    const item = itemOf(r);
    const at = time(r.at);
    if (!item || !str(r.version) || !Number.isFinite(at)) return undefined;
    const ref = refOf(item.kind, item.name);
    if (r.released === true) return { ...ref, version: r.version, released: true, at, ...(str(r.superseded_by) ? { superseded_by: r.superseded_by } : {}) };
    return str(r.env_id) && str(r.why) ? { ...ref, version: r.version, env_id: r.env_id, ...names(r), at, why: r.why } : undefined;
  },
  toRecord: (e) => ({ ...e, ...refOf(itemOf(e)!.kind, itemOf(e)!.name), at: new Date(e.at).toISOString() }),
  fold: (entries) => QuarantineTable.of(entries),
  adds(table, e) {
    const { kind, name } = itemOf(e)!;
    const held = table.get(kind, name, e.version);
    if (isRelease(e)) return held !== undefined;
    // A break dated before the version's last release is folded away already: recording it again changes nothing.
    return e.at > table.releasedAt(kind, name, e.version) && !held?.env_ids.includes(e.env_id);
  },
  add: (table, e) => void table.add([e]),
  kept: (table) => table.kept(),
  hold: (table, line) => void table.hold(line),
};

/** A failure or a clear as a line, times in ISO 8601. A line that is not one holds what it names (table-file.ts). */
export const RETRY_LINES: TableFormat<RetryEntry, RetryTable> = {
  fromRecord(r) {
    const item = itemOf(r);
    const at = time(r.at);
    if (!item || !Number.isFinite(at)) return undefined;
    const ref = refOf(item.kind, item.name);
    if (r.cleared === true)
      return {
        ...ref,
        cleared: true,
        at,
        ...(str(r.env_id) ? { env_id: r.env_id } : {}),
        ...(str(r.version) ? { version: r.version } : {}),
        ...(str(r.why) ? { why: r.why } : {}),
      };
    if (!str(r.env_id) || !str(r.version) || !str(r.run) || !str(r.why)) return undefined;
    return { ...ref, env_id: r.env_id, version: r.version, ...names(r), run: r.run, at, why: r.why };
  },
  toRecord: (e) => ({ ...e, ...refOf(itemOf(e)!.kind, itemOf(e)!.name), at: new Date(e.at).toISOString() }),
  fold: (entries) => RetryTable.of(entries),
  adds(table, e) {
    const { kind, name } = itemOf(e)!;
    // A clear naming its environment looks at that environment's failures alone (a plan may write many).
    if (isClear(e)) return (e.env_id === undefined ? table.standing() : table.standingOn(e.env_id, kind, name)).some((f) => covers(e, f, kind, name));
    // A failure a clear folded away already (its run's end recorded again after `retry clear`) changes nothing.
    if (table.cleared(e)) return false;
    return !table.standingOn(e.env_id, kind, name).some((f) => versionKey(f.version) === versionKey(e.version) && f.run === e.run);
  },
  add: (table, e) => void table.add([e]),
  kept: (table) => table.kept(),
  hold: (table, line) => void table.hold(line),
};

/** Whether a clear folds a failure away. */
function covers(c: Extract<RetryEntry, { cleared: true }>, f: RetryEntry, kind: string, name: string): boolean {
  if (isClear(f)) return false;
  const item = itemOf(f)!;
  return (
    item.kind === kind &&
    item.name === name &&
    c.at >= f.at &&
    (c.env_id === undefined || c.env_id === f.env_id) &&
    (c.version === undefined || versionKey(c.version) === versionKey(f.version))
  );
}
