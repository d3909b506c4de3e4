import type { StagingStore } from '../types.js';
import { StagingTable } from '../../inventory/staging-table.js';
import { entryOf, lineOf } from '../staging-file.js';
import { companyKey } from './lock.js';
import { RedisLink, Script } from './link.js';
import { STAGING_RECORD } from './scripts.js';

const RECORD = new Script(STAGING_RECORD);

/**
 * What staging ran of a company's theme versions, in one Redis list shared by every machine that
 * names the Redis: the same lines as the state folder's file, appended, and read whole. A failure
 * stops the command as any lost coordination does (CoordinationError, exit 3).
 */
export function redisStaging(link: RedisLink, company: string): StagingStore {
  const key = companyKey(company.toLowerCase(), 'staging');
  return {
    where: key,
    async record(entries) {
      const reply = (await link.run(RECORD, [key], entries.map(lineOf))) as string[];
      return StagingTable.of(reply.flatMap((line) => entryOf(line) ?? []));
    },
  };
}
