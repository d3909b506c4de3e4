import { itemOf, KINDS } from '../inventory/kinds.js';
import type { UnreadLine } from '../inventory/unread-line.js';

/**
 * What a store line this release cannot read names, as far as its text tells (inventory/unread-line.ts):
 * the fields of a JSON object that is not an entry (a field missing, a later format), else the
 * `"plugin":"forms"`, `"version":"2.0.0"` and `"env_id":"…"` a line cut short by a crash still shows
 * whole (a value whose closing quote was cut is not read). Nothing when it tells nothing.
 */
export function lineNames(line: string): Pick<UnreadLine, 'item' | 'version' | 'env_id'> {
  const fields = objectOf(line) ?? quotedFields(line);
  const item = itemOf(fields);
  if (!item) return {};
  const str = (key: string) => (typeof fields[key] === 'string' ? { [key]: fields[key] } : {});
  return { item, ...str('version'), ...str('env_id') };
}

function objectOf(line: string): Record<string, unknown> | undefined {
  try {
    const value: unknown = JSON.parse(line);
    return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

/** The names this reads from a cut line: the kinds, the version and the environment. */
const NAMED = [...KINDS, 'version', 'env_id'];
const QUOTED = /"([a-z_]+)"\s*:\s*("(?:[^"\\]|\\.)*")/g;

/** The string fields a line that is not JSON still shows whole, the first of each name. */
function quotedFields(line: string): Record<string, unknown> {
  const fields: Record<string, unknown> = {};
  for (const [, key, value] of line.matchAll(QUOTED)) {
    if (!NAMED.includes(key!) || key! in fields) continue;
    try {
      fields[key!] = JSON.parse(value!) as unknown;
    } catch {
      // A value this cannot read names nothing.
    }
  }
  return fields;
}
