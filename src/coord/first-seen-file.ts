import { FirstSeen, type FirstSighting } from '../inventory/first-seen.js';
import { itemOf, refOf } from '../inventory/kinds.js';
import { versionKey } from '../util/item-version.js';
import { recordFolded, type LineFormat } from './folded-file.js';
import { companyJsonl, stateFolderFailure } from './jsonl-file.js';
import type { FirstSeenStore } from './types.js';

/**
 * A company's first-seen times in the state folder: `first-seen/<company>.jsonl`, one line per
 * sighting (`{"v":1,"theme","version","first_seen"}`, a plugin's `"plugin"` for `"theme"`), appended to (jsonl-file.ts) only when it moves a
 * version's time earlier or names a new one, and compacted now and then. Reading takes the earliest
 * time of a version's lines (by its key: `6.0` and `6.0.0` are one), so a time never moves later and
 * no process can lose another's line (as a read-modify-write would).
 */
export function firstSeenFile(stateDir: string, company: string, options: { compactAbove?: number } = {}): FirstSeenStore {
  const file = companyJsonl(stateDir, 'first-seen', company, 'first-seen');
  return {
    where: file.path,
    record(sightings, at) {
      try {
        const entries = sightings.map((s) => ({ ...s, version: versionKey(s.version), at }));
        return Promise.resolve(FirstSeen.of(recordFolded(file, SIGHTING_LINES, entries, options.compactAbove)));
      } catch (error) {
        throw stateFolderFailure(error, 'first-seen times', file.path);
      }
    },
  };
}

/**
 * A sighting as a line, the time in ISO 8601. A line that is not one is skipped: its version's clock
 * starts again, which holds an update longer, never sends one sooner.
 */
export const SIGHTING_LINES: LineFormat<FirstSighting> = {
  fromRecord(record) {
    const { version, first_seen } = record;
    const item = itemOf(record);
    const at = typeof first_seen === 'string' ? Date.parse(first_seen) : NaN;
    return item && typeof version === 'string' && Number.isFinite(at) ? { ...refOf(item.kind, item.name), version, at } : undefined;
  },
  toRecord: (s) => ({ ...refOf(itemOf(s)!.kind, itemOf(s)!.name), version: versionKey(s.version), first_seen: new Date(s.at).toISOString() }),
  key: (s) => JSON.stringify([itemOf(s)!.kind, itemOf(s)!.name, versionKey(s.version)]),
  at: (s) => s.at,
};
