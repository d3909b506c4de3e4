import { FirstSeen, type FirstSighting } from '../../inventory/first-seen.js';
import { versionKey } from '../../util/theme-version.js';
import type { FirstSeenStore } from '../types.js';
import { companyKey } from './lock.js';
import { RedisLink, Script } from './link.js';
import { FIRST_SEEN_RECORD } from './scripts.js';

const RECORD = new Script(FIRST_SEEN_RECORD);

/**
 * A company's first-seen times in one Redis hash, shared by every machine that names the Redis: a
 * version first seen by any of them ages on all. A field is `[theme, version]` as JSON (unambiguous
 * whatever a theme is called), its value the time in ms. A failure stops the command as any lost
 * coordination does (CoordinationError, exit 3), before anything is sent.
 */
export function redisFirstSeen(link: RedisLink, company: string): FirstSeenStore {
  // A UUID in either case is one company: one table.
  const key = companyKey(company.toLowerCase(), 'first-seen');
  return {
    where: key,
    async record(sightings, at) {
      // By the version's key: a field an earlier release wrote as `6.0` folds with this `6.0.0` when read.
      const fields = [...new Set(sightings.map((s) => JSON.stringify([s.theme, versionKey(s.version)])))];
      const reply = (await link.run(RECORD, [key], [Math.round(at), ...fields])) as string[];
      const entries: FirstSighting[] = [];
      for (let i = 0; i + 1 < reply.length; i += 2) {
        const field = fieldOf(reply[i]!);
        if (field) entries.push({ ...field, at: Number(reply[i + 1]) });
      }
      return FirstSeen.of(entries);
    },
  };
}

/** A field this store wrote; anything else in the hash is skipped (its version's clock starts again: a longer hold, never a sooner send). */
function fieldOf(text: string): { theme: string; version: string } | undefined {
  try {
    const [theme, version, ...rest] = JSON.parse(text) as unknown[];
    return typeof theme === 'string' && typeof version === 'string' && rest.length === 0 ? { theme, version } : undefined;
  } catch {
    return undefined;
  }
}
