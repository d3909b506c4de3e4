import type { EndpointName } from '../api/endpoints.js';
import type { InstalledItem } from '../inventory/inventory.js';
import { KIND_TABLE, type Kind, type KindRow } from '../inventory/kinds.js';
import { orderVersions, versionParts } from '../util/item-version.js';
import type { RequestSpec } from './action.js';
import { AFTER_UPDATE, afterUpdateField, CORE_DATABASE } from './after-update.js';
import { globs } from './schema-parts.js';

/**
 * The writes of each kind of item, as the service takes them: the kind table (kinds.ts) names the
 * endpoints; here is how their bodies are made and read back. Themes and plugins send `{name,
 * update_version}` pinned and `{<plural>: [{name}]}` in bulk; WordPress itself has no endpoint of its
 * own and is updated by WP-CLI, `wp core update --version=<judged>` (the version in the command is
 * what the plan judged, so it is the one a step reads back).
 */
export interface ItemWrites {
  /** What the action says it does (`sitefleet actions`, docs). */
  summary: string;
  /** The `with:` fields that pick which items a task updates (none for a kind with one item). */
  pick: Record<string, unknown>;
  /** The bulk update of these items, where the kind has one. */
  bulk?(envId: string, names: string[]): RequestSpec;
  /** The update of one item to the version judged. */
  pinned(envId: string, item: { name: string; update_version: string }): RequestSpec;
  /** The item and version a pinned body sends; undefined for a bulk body (or another body). */
  pinnedOf(body: unknown): { name: string; update_version: string } | undefined;
  /** The items a bulk body names. */
  bulkNames(body: unknown): string[];
  /**
   * The WP-CLI command that puts one item back to a version it ran, by its own files (health.undo:
   * items_first); undefined when the name or the version is not one a command may take (PUT_BACK_TEXT).
   */
  putBack(envId: string, item: { name: string; version: string }): RequestSpec | undefined;
  /** The commands that follow a write of this kind whose operation succeeded (after-update.ts), by the slugs a task names. */
  followUp?(body: unknown, afterUpdate: readonly string[] | undefined): string[];
}

/** WP-CLI's own update command, with the only version it may name: a numbered one the plan judged. */
const CORE_UPDATE = /^wp core update --version=(\d+\.\d+(?:\.\d+)?)$/;
/** A numbered version with nothing around it (no whitespace, no newline): the only text a command may take. */
const NUMBERED_TEXT = /^\d+\.\d+(?:\.\d+)?$/;
/**
 * A slug as a command may take it: the listing's text, so only letters, digits, `_`, `-` and `.` (all
 * within the API's wp_command pattern), starting with a letter or digit so it is never read as a flag.
 */
const SLUG_TEXT = /^[a-zA-Z0-9][a-zA-Z0-9_.-]*$/;

/** A WP-CLI command on one environment, made only of text the patterns above let through. */
function wpCommand(envId: string, words: string): RequestSpec {
  return { endpoint: 'runWpCliCommand', params: { env_id: envId }, body: { wp_command: words } };
}

function listed(row: KindRow): ItemWrites {
  const { plural } = row;
  const bulk = row.bulk;
  return {
    summary: `update ${plural} where the listing shows an update available, within an update policy (PUT …/${plural}/bulk-update; a version the policy judged: PUT …/${plural}, pinned)`,
    // `exclude`: a fleet's "all but the page builder" (a target's exclude selects environments, not items).
    pick: {
      [plural]: { ...globs, description: `only these ${row.kind} slugs (globs); default all` },
      exclude: { ...globs, description: `${row.kind} slugs (globs) this task never updates, even where ${plural} selects them` },
    },
    ...(bulk
      ? { bulk: (envId: string, names: string[]) => ({ endpoint: bulk, params: { env_id: envId }, body: { [plural]: names.map((name) => ({ name })) } }) }
      : {}),
    pinned: (envId, t) => ({ endpoint: row.pinned, params: { env_id: envId }, body: { name: t.name, update_version: t.update_version } }),
    pinnedOf(body) {
      const b = body as { name?: unknown; update_version?: unknown } | undefined;
      return typeof b?.name === 'string' && typeof b.update_version === 'string' ? { name: b.name, update_version: b.update_version } : undefined;
    },
    bulkNames(body) {
      const list = (body as Record<string, unknown> | undefined)?.[plural];
      return Array.isArray(list) ? list.flatMap((t) => (typeof (t as { name?: unknown }).name === 'string' ? [(t as { name: string }).name] : [])) : [];
    },
    putBack: (envId, t) =>
      SLUG_TEXT.test(t.name) && NUMBERED_TEXT.test(t.version) ? wpCommand(envId, `wp ${row.kind} install ${t.name} --version=${t.version} --force`) : undefined,
  };
}

function core(row: KindRow): ItemWrites {
  const endpoint: EndpointName = row.pinned;
  return {
    summary:
      'update WordPress to the newest version the fleet runs (or one the task names), within an update policy (`wp core update --version=…` through WP-CLI, read back from the site listing)',
    pick: {
      versions: {
        type: 'array',
        minItems: 1,
        uniqueItems: true,
        items: { type: 'string', pattern: '^\\d+\\.\\d+(\\.\\d+)?$' },
        description: 'only these WordPress versions (an allow-list; one newer than any the fleet runs is offered too); default the newest the fleet runs',
      },
    },
    pinned: (envId, t) => ({ endpoint, params: { env_id: envId }, body: { wp_command: `wp core update --version=${t.update_version}` } }),
    pinnedOf(body) {
      const command = (body as { wp_command?: unknown } | undefined)?.wp_command;
      const m = typeof command === 'string' ? CORE_UPDATE.exec(command) : null;
      return m ? { name: row.only!, update_version: m[1]! } : undefined;
    },
    bulkNames: () => [],
    // A downgrade: WP-CLI moves to an older release only with --force.
    putBack: (envId, t) => (NUMBERED_TEXT.test(t.version) ? wpCommand(envId, `wp core update --version=${t.version} --force`) : undefined),
    // `wp core update` leaves the database as it was: WordPress's own step follows every core write.
    followUp: () => [CORE_DATABASE],
  };
}

/** Plugins name their own database step to run after their update (after-update.ts). */
function afterUpdate(writes: ItemWrites): ItemWrites {
  return {
    ...writes,
    pick: { ...writes.pick, after_update: afterUpdateField },
    followUp(body, named) {
      const written = new Set([writes.pinnedOf(body)?.name, ...writes.bulkNames(body)]);
      return (named ?? []).filter((slug) => written.has(slug)).flatMap((slug) => AFTER_UPDATE[slug] ?? []);
    },
  };
}

export const ITEM_WRITES: Record<Kind, ItemWrites> = {
  theme: listed(KIND_TABLE.theme),
  plugin: afterUpdate(listed(KIND_TABLE.plugin)),
  core: core(KIND_TABLE.core),
};

/**
 * WordPress's offer, made per task: the listing gives no offered version, so what an environment is
 * offered is every newer numbered version the fleet runs (`offers`, newest first) and those the task
 * names (`versions`, then an allow-list too). The newest that the version rules let through is taken
 * (`allows`: max_bump); when none does, the newest, for the words that say why it is left alone.
 * Versions are numbered ones only: a version is written into a command, and the service's text is
 * never let into one.
 */
export function offerOf(item: InstalledItem, named: readonly string[] | undefined, allows: (version: string) => boolean): InstalledItem {
  if (item.offers === undefined) return item;
  // Exactly numbered text (versionParts alone trims, so `7.0.0\n` would pass and reach the command).
  const newer = (v: string) => NUMBERED_TEXT.test(v) && versionParts(v) !== undefined && (orderVersions(v, item.version) ?? 0) > 0;
  const candidates = [...new Set([...item.offers, ...(named ?? [])])]
    .filter((v) => newer(v) && (named === undefined || named.includes(v)))
    .sort((a, b) => orderVersions(b, a)!);
  const { offers: _offers, ...rest } = item;
  if (candidates.length === 0) return { ...rest, update_available: false, update_version: '' };
  return { ...rest, update_available: true, update_version: candidates.find(allows) ?? candidates[0]! };
}
