import { FirstSeen, type FirstSighting } from '../../inventory/first-seen.js';
import { itemOf, KINDS, refOf, type Kind, keyKind, BASE_KIND } from '../../inventory/kinds.js';
import { versionKey } from '../../util/item-version.js';
import type { FirstSeenStore } from '../types.js';
import { companyKey } from './lock.js';
import { RedisLink, Script } from './link.js';
import { FIRST_SEEN_RECORD } from './scripts.js';

const RECORD = new Script(FIRST_SEEN_RECORD);

/**
 * A company's first-seen times in one Redis hash, shared by every machine that names the Redis: a
 * version first seen by any of them ages on all. A field is `[name, version]` as JSON for a theme
 * (as before plugins came), `[name, version, kind]` for another kind (unambiguous whatever an item is
 * called), its value the time in ms. A failure stops the command as any lost
 * coordination does (CoordinationError, exit 3), before anything is sent.
 */
export function redisFirstSeen(link: RedisLink, company: string): FirstSeenStore {
  // A UUID in either case is one company: one table.
  const key = companyKey(company.toLowerCase(), 'first-seen');
  return {
    where: key,
    async record(sightings, at) {
      // By the version's key: a field an earlier release wrote as `6.0` folds with this `6.0.0` when read.
      const fields = [...new Set(sightings.map((s) => fieldText(s.version, itemOf(s)!)))];
      const reply = (await link.run(RECORD, [key], [Math.round(at), ...fields])) as string[];
      const entries: FirstSighting[] = [];
      for (let i = 0; i + 1 < reply.length; i += 2) {
        const field = fieldOf(reply[i]!);
        if (field) entries.push({ ...field, at: Number(reply[i + 1]) } as FirstSighting);
      }
      return FirstSeen.of(entries);
    },
  };
}

function fieldText(version: string, { kind, name }: { kind: Kind; name: string }): string {
  return JSON.stringify([name, versionKey(version), ...keyKind(kind)]);
}

/** A field this store wrote; anything else in the hash is skipped (its version's clock starts again: a longer hold, never a sooner send). */
function fieldOf(text: string): Omit<FirstSighting, 'at'> | undefined {
  try {
    const [name, version, kind = BASE_KIND, ...rest] = JSON.parse(text) as unknown[];
    if (typeof name !== 'string' || typeof version !== 'string' || !KINDS.includes(kind as Kind) || rest.length > 0) return undefined;
    return { ...refOf(kind as Kind, name), version };
  } catch {
    return undefined;
  }
}
