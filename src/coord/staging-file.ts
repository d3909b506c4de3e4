import { StagingTable, type StagingEntry } from '../inventory/staging-table.js';
import { companyJsonl, stateFolderFailure } from './jsonl-file.js';
import type { StagingStore } from './types.js';

/**
 * What staging ran of a company's theme versions, in the state folder: `staging/<company>.jsonl`,
 * one entry a line, only ever appended to (jsonl-file.ts). The table keeps the earliest time of each
 * kind, so the order lines land in does not matter and a soak never restarts. Only staging steps, as
 * they end, write it (app/staging-record.ts).
 */
export function stagingFile(stateDir: string, company: string): StagingStore {
  const file = companyJsonl(stateDir, 'staging', company, 'staging');
  return {
    where: file.path,
    record(entries) {
      try {
        const { lines, cutShort } = file.read();
        if (entries.length > 0) file.append(entries.map(lineOf), cutShort);
        return Promise.resolve(StagingTable.of([...lines.flatMap((line) => entryOf(line) ?? []), ...entries]));
      } catch (error) {
        throw stateFolderFailure(error, 'what staging ran', file.path);
      }
    },
  };
}

/** An entry as a line: the time in ISO 8601, as a person reading the file expects. */
export function lineOf(e: StagingEntry): string {
  return JSON.stringify({
    env_id: e.env_id,
    theme: e.theme,
    version: e.version,
    kind: e.kind,
    at: new Date(e.at).toISOString(),
    ...(e.why ? { why: e.why } : {}),
  });
}

/** A line this store wrote; anything else is skipped (a soak that starts again holds live longer, never sends sooner). */
export function entryOf(line: string): StagingEntry | undefined {
  try {
    const { env_id, theme, version, kind, at, why } = JSON.parse(line) as Record<string, unknown>;
    const ms = typeof at === 'string' ? Date.parse(at) : NaN;
    if (typeof env_id !== 'string' || typeof theme !== 'string' || typeof version !== 'string' || !Number.isFinite(ms)) return undefined;
    if (kind !== 'healthy' && kind !== 'failed') return undefined;
    return { env_id, theme, version, kind, at: ms, ...(typeof why === 'string' ? { why } : {}) };
  } catch {
    return undefined;
  }
}
