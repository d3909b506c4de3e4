import { itemOf, refOf, keyKind } from '../inventory/kinds.js';
import { StagingTable, type StagingEntry } from '../inventory/staging-table.js';
import { recordFolded, type LineFormat } from './folded-file.js';
import { companyJsonl, stateFolderFailure } from './jsonl-file.js';
import type { StagingStore } from './types.js';

/**
 * What staging ran of a company's item versions, in the state folder: `staging/<company>.jsonl`,
 * one entry a line (jsonl-file.ts), appended only when it is the earliest of its kind for its
 * (environment, item, version), and compacted now and then. The table keeps the earliest time of
 * each kind, so the order lines land in does not matter and a soak never restarts. Only staging
 * steps, as they end, write it (app/staging-record.ts); an end recorded again (by each `status`)
 * adds nothing.
 */
export function stagingFile(stateDir: string, company: string, options: { compactAbove?: number } = {}): StagingStore {
  const file = companyJsonl(stateDir, 'staging', company, 'staging');
  return {
    where: file.path,
    record(entries) {
      try {
        return Promise.resolve(StagingTable.of(recordFolded(file, STAGING_LINES, entries, options.compactAbove)));
      } catch (error) {
        throw stateFolderFailure(error, 'what staging ran', file.path);
      }
    },
  };
}

/**
 * An entry as a line, the time in ISO 8601 as a person reading the file expects. A line that is not
 * one is skipped (a soak that starts again holds live longer, never sends sooner).
 */
export const STAGING_LINES: LineFormat<StagingEntry> = {
  fromRecord(record) {
    const { env_id, version, kind, at, why } = record;
    const item = itemOf(record);
    const ms = typeof at === 'string' ? Date.parse(at) : NaN;
    if (typeof env_id !== 'string' || !item || typeof version !== 'string' || !Number.isFinite(ms)) return undefined;
    if (kind !== 'healthy' && kind !== 'failed') return undefined;
    return { env_id, ...refOf(item.kind, item.name), version, kind, at: ms, ...(typeof why === 'string' ? { why } : {}) };
  },
  toRecord: (e) => ({
    env_id: e.env_id,
    ...refOf(itemOf(e)!.kind, itemOf(e)!.name),
    version: e.version,
    kind: e.kind,
    at: new Date(e.at).toISOString(),
    ...(e.why ? { why: e.why } : {}),
  }),
  // A theme's key as before plugins came; another kind's names its kind last.
  key: (e) => {
    const { kind, name } = itemOf(e)!;
    return JSON.stringify([e.env_id, name, e.version, e.kind, ...keyKind(kind)]);
  },
  at: (e) => e.at,
};
