import { versionKey } from '../util/item-version.js';
import type { Kind } from './kinds.js';

/**
 * A line of the company's quarantine or retries that this release cannot read (cut short by a crash,
 * edited by hand, written by a later release): never dropped, and never read as nothing. What it
 * names, as far as its text tells, is held as if the line said so (the quarantine and retry tables
 * decide how far: quarantine-table.ts, retry-table.ts), and every command that reads the store warns
 * naming it, until a person repairs or deletes it.
 */
export interface UnreadLine {
  /** The file and its line number (`…/quarantine/<company>.jsonl line 7`), or the Redis hash and field. */
  where: string;
  /** Why it could not be read. */
  why: string;
  /** The item it names, when its text tells; none when it tells nothing. */
  item?: { kind: Kind; name: string };
  /** The version it names, when it names an item and a version. */
  version?: string;
  /** The environment it names, when it does. */
  env_id?: string;
}

/** Whether the line, naming what it names, may hold `version` of the item (on `envId`, when the store is per environment). */
export function unreadNames(line: UnreadLine, kind: Kind, name: string, version: string, envId?: string): boolean {
  if (!line.item || line.item.kind !== kind || line.item.name !== name) return false;
  if (line.version !== undefined && versionKey(line.version) !== versionKey(version)) return false;
  return envId === undefined || line.env_id === undefined || line.env_id === envId;
}

/** What the line names, in words: `plugin forms 2.0.0`, `every version of plugin forms`; `on <env>` where its store is per environment. */
export function unreadWhat(line: UnreadLine, perEnvironment: boolean): string | undefined {
  if (!line.item) return undefined;
  const item = `${line.item.kind} ${line.item.name}`;
  const version = line.version === undefined ? `every version of ${item}` : `${item} ${line.version}`;
  return line.env_id === undefined || !perEnvironment ? version : `${version} on ${line.env_id}`;
}

/** What a person does about it. */
export const unreadOverride = (line: Pick<UnreadLine, 'where'>) => `repair or delete ${line.where}`;
