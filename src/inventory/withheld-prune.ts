import { LONGEST_AGE, parseDuration } from '../util/duration.js';
import { orderVersions, versionKey } from '../util/item-version.js';
import { installedOf, type InstalledItem, type Inventory } from './inventory.js';
import { KIND_TABLE, itemKey, itemOf, refOf, type Kind } from './kinds.js';
import { releaseOf, type QuarantineRelease, type QuarantineTable } from './quarantine-table.js';
import type { RetryClear, RetryTable } from './retry-table.js';

/**
 * What the company's quarantine and retries hold that the fleet has moved past (issue 48: neither
 * store may only grow), judged from the inventory a plan is made from. Pure: the command writes what
 * this returns into the stores before the plan (app/withheld-record.ts), as it records first-seen
 * sightings there. Only what the inventory could look at is judged: a kind not read, read from some
 * environments only, or whose offer a task chooses (WordPress: `offers` and a playbook's own
 * `versions`, which no listing shows) folds nothing away, except a failure no run tried for the
 * longest wait a playbook may set past its date.
 */

/**
 * The installed items of a kind by environment id, where the inventory shows them whole; `all`: the
 * company listing was read, so an environment absent from it has none.
 */
interface Shown {
  all: boolean;
  envs: Map<string, InstalledItem[]>;
}

function shownOf(inventory: Inventory, kind: Kind): Shown | undefined {
  const listed = inventory.listed[kind];
  if (!listed || listed.unavailable !== undefined || KIND_TABLE[kind].only !== undefined) return undefined;
  const all = listed.from_environments === undefined;
  const envs = new Map<string, InstalledItem[]>();
  for (const env of inventory.environments) if (all || env.items[kind] !== undefined) envs.set(env.id, installedOf(env, kind));
  return { all, envs };
}

/** Whether the listing offers `version` to this install (an offered version is what a plan would send). */
const offers = (t: InstalledItem, version: string) => t.update_version !== '' && versionKey(t.update_version) === versionKey(version);

/**
 * A release for each quarantined version the fleet has moved past: its kind's company listing was read
 * whole, no environment is offered that version any more, and some environment runs or is offered a
 * newer one (`superseded_by`, the newest). The release folds its breaks away like a person's; a later
 * break of the same version quarantines it again.
 */
export function supersededOf(table: QuarantineTable, inventory: Inventory, at: number): QuarantineRelease[] {
  const held = table.list();
  const shown = new Map<Kind, Shown | undefined>();
  const installs = new Map<string, InstalledItem[]>();
  for (const q of held) {
    if (!shown.has(q.kind)) shown.set(q.kind, shownOf(inventory, q.kind));
    installs.set(itemKey(q.kind, q.name), []);
  }
  for (const [kind, s] of shown) for (const list of s?.all ? s.envs.values() : []) for (const t of list) installs.get(itemKey(kind, t.name))?.push(t);
  return held.flatMap((q) => {
    if (!shown.get(q.kind)?.all) return [];
    const items = installs.get(itemKey(q.kind, q.name))!;
    if (items.some((t) => offers(t, q.version))) return [];
    const newer = items
      .flatMap((t) => [t.version, t.update_version])
      .filter((v) => v !== '' && (orderVersions(v, q.version) ?? 0) > 0)
      .sort((a, b) => orderVersions(b, a)!);
    return newer.length > 0 ? [{ ...releaseOf(q.kind, q.name, q.version, at), superseded_by: newer[0]! }] : [];
  });
}

/**
 * A clear for each version's failures on an environment that mean nothing any more: the inventory
 * shows that environment's items of the kind and the version is not offered there (the environment
 * is gone, the item removed, or it runs or is offered another version), or no run tried it for the
 * longest wait any playbook may set (`LONGEST_AGE.retryBackoff`) past the date this playbook's
 * backoff gave it. Counted from that date, not from the failure, and with the longest wait of any
 * playbook, not this one's: every playbook of the company would send it by then (each waits at most
 * that long after a failure), so the clear lets nothing go sooner, only the next failure's backoff
 * starts over; and a version waiting the longest step, due exactly then, is not cleared at its date.
 */
export function retriesGoneOf(table: RetryTable, inventory: Inventory, backoff: readonly number[], now: number): RetryClear[] {
  const shown = new Map<Kind, Shown | undefined>();
  const judged = new Set<string>();
  return table.standing().flatMap((f) => {
    const { kind, name } = itemOf(f)!;
    const group = JSON.stringify([f.env_id, itemKey(kind, name), versionKey(f.version)]);
    if (judged.has(group)) return [];
    judged.add(group);
    if (!shown.has(kind)) shown.set(kind, shownOf(inventory, kind));
    const why = goneWhy(shown.get(kind), f.env_id, name, f.version) ?? expiredWhy(table.state(f.env_id, kind, name, f.version, backoff)?.retry_at, now);
    return why ? [{ ...refOf(kind, name), cleared: true as const, at: now, env_id: f.env_id, version: f.version, why }] : [];
  });
}

/** Why the inventory says `version` of the item is no longer offered on the environment; undefined when it is, or when it cannot tell. */
function goneWhy(shown: Shown | undefined, envId: string, name: string, version: string): string | undefined {
  if (!shown) return undefined;
  const items = shown.envs.get(envId);
  if (items === undefined) return shown.all ? 'the environment is not in the listing any more' : undefined;
  const item = items.find((t) => t.name === name);
  if (!item) return 'the item is not on the environment any more';
  if (offers(item, version)) return undefined;
  return `${version} is not offered there any more (it runs ${item.version || 'an unnamed version'}${item.update_version ? `, offered ${item.update_version}` : ''})`;
}

/** The longest wait a playbook may give a failure (the schema's bound on each step of `settings.retry_backoff`). */
const LONGEST_WAIT = parseDuration(LONGEST_AGE.retryBackoff)!;

function expiredWhy(retryAt: number | undefined, now: number): string | undefined {
  if (retryAt === undefined || now <= retryAt + LONGEST_WAIT) return undefined;
  return `due since ${new Date(retryAt).toISOString()} and tried by no run for ${LONGEST_AGE.retryBackoff}: its backoff starts over`;
}
