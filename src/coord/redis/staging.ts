import { BASE_KIND } from '../../inventory/kinds.js';
import { CoordinationError } from '../../errors.js';
import { StagingTable, type StagingEntry } from '../../inventory/staging-table.js';
import { FORMAT, readLine } from '../folded-file.js';
import { STAGING_LINES } from '../staging-file.js';
import type { StagingStore } from '../types.js';
import { companyKey } from './lock.js';
import { RedisLink, Script } from './link.js';
import { STAGING_MIGRATE, STAGING_RECORD } from './scripts.js';

const RECORD = new Script(STAGING_RECORD);
const MIGRATE = new Script(STAGING_MIGRATE);
/** Migration steps in a row that may find the list changed under them (another process moving it too). */
const MIGRATE_TRIES = 20;

/**
 * What staging ran of a company's item versions, in one Redis hash shared by every machine that
 * names the Redis: a field per (environment, item, version, kind), `[env_id, theme, version, kind]`
 * as JSON (another item kind than a theme named last: `[env_id, name, version, kind, "plugin"]`),
 * its value `{"v":1,"at":ms,"why"?}`; a Lua script keeps the earliest time, so the hash never
 * holds more than one field per key however often an end is recorded. Releases before it appended
 * lines to a list (`…:staging`): its lines are moved into the hash before anything is recorded, by
 * whichever process comes first. A failure stops the command as any lost coordination does
 * (CoordinationError, exit 3).
 */
export function redisStaging(link: RedisLink, company: string): StagingStore {
  const keys = [companyKey(company.toLowerCase(), 'staging', 'table'), companyKey(company.toLowerCase(), 'staging')];
  return {
    where: keys[0]!,
    async record(entries) {
      for (let changed = 0; ;) {
        const [state, ...rest] = (await link.run(RECORD, keys, triplesOf(entries))) as [number, ...string[]];
        if (state === 0) return StagingTable.of(tableOf(rest));
        const moved = rest.flatMap((line) => {
          const read = readLine(STAGING_LINES, line);
          return read && 'entry' in read ? [read.entry] : [];
        });
        if ((await link.run(MIGRATE, keys, [rest.length, ...rest, ...triplesOf(moved)])) === 0 && ++changed >= MIGRATE_TRIES)
          throw new CoordinationError(`the staging list ${keys[1]} kept changing while its lines were moved to ${keys[0]}: try again`);
      }
    },
  };
}

/** Entries as the scripts' (field, ms, value) triples. */
function triplesOf(entries: readonly StagingEntry[]): string[] {
  return entries.flatMap((e) => {
    const at = Math.round(e.at);
    return [STAGING_LINES.key(e), String(at), JSON.stringify({ v: FORMAT, at, ...(e.why ? { why: e.why } : {}) })];
  });
}

/** The hash's fields and values as entries; a field or value this store did not write is skipped (a longer hold, never a sooner send). */
function tableOf(reply: readonly string[]): StagingEntry[] {
  const entries: StagingEntry[] = [];
  for (let i = 0; i + 1 < reply.length; i += 2) {
    try {
      const [env_id, name, version, kind, item = BASE_KIND, ...more] = JSON.parse(reply[i]!) as unknown[];
      const { v, at, why } = JSON.parse(reply[i + 1]!) as Record<string, unknown>;
      if (more.length > 0 || v !== FORMAT || typeof at !== 'number' || typeof item !== 'string') continue;
      const entry = STAGING_LINES.fromRecord({ env_id, [item]: name, version, kind, at: new Date(at).toISOString(), why });
      if (entry) entries.push(entry);
    } catch {
      // not this store's
    }
  }
  return entries;
}
