import { FirstSeen, type FirstSighting } from '../inventory/first-seen.js';
import { companyJsonl, stateFolderFailure } from './jsonl-file.js';
import type { FirstSeenStore } from './types.js';

/**
 * A company's first-seen times in the state folder: `first-seen/<company>.jsonl`, one line per
 * sighting (`{"theme","version","first_seen"}`), only ever appended to (jsonl-file.ts). Reading takes
 * the earlier time of two lines for a version, so a time never moves later and no process can lose
 * another's line (as a read-modify-write would).
 */
export function firstSeenFile(stateDir: string, company: string): FirstSeenStore {
  const file = companyJsonl(stateDir, 'first-seen', company, 'first-seen');
  return {
    where: file.path,
    record(sightings, at) {
      try {
        // A line that is not a sighting is skipped: its version's clock starts again, which holds an
        // update longer, never sends one sooner.
        const { lines, cutShort } = file.read();
        const table = FirstSeen.of(lines.flatMap((line) => sightingOf(line) ?? []));
        const added = table.missing(sightings, at);
        const first_seen = new Date(at).toISOString();
        if (added.length > 0)
          file.append(
            added.map(({ theme, version }) => JSON.stringify({ theme, version, first_seen })),
            cutShort,
          );
        return Promise.resolve(FirstSeen.of([...table.entries(), ...added.map((s) => ({ ...s, at }))]));
      } catch (error) {
        throw stateFolderFailure(error, 'first-seen times', file.path);
      }
    },
  };
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
