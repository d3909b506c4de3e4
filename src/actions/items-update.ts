import { matchesAny } from '../util/glob.js';
import { describeDecision, usesReleaseAge } from '../inventory/release-age.js';
import type { Action, BatchConfirm, Expansion, ItemChange, ItemVersion, ReadBack, StepOutcome } from './action.js';
import { nameOf, refOf } from '../inventory/kinds.js';
import { installedOf, type Environment, type Inventory, type InstalledItem } from '../inventory/inventory.js';
import type { Kind, KindRow } from '../inventory/kinds.js';
import { withBlock } from './schema-parts.js';
import { checkPolicy, judgeUpdate, policyFields, type ItemsUpdateWith } from './item-update-policy.js';
import { ITEM_WRITES, offerOf, type ItemWrites } from './item-writes.js';

/**
 * An item update (themes.update, plugins.update: one action per row of the kind table, kinds.ts):
 * the items the listing shows an update `available` for, as the task's update policy allows
 * (item-update-policy.ts). An update whose target version is itself flagged vulnerable is left alone
 * by default: moving from one vulnerable version to another is not a fix, and a person should choose.
 * `only_vulnerable` keeps to installed versions flagged vulnerable (security-only nights); `max_bump`
 * leaves updates that jump further than a patch or minor release (see util/item-version.ts);
 * `min_release_age` and `by_bump` let new versions age first (inventory/release-age.ts), which needs
 * the first-seen table the plan is given (`reads`).
 *
 * What was judged is what gets installed. The bulk update (`PUT …/themes/bulk-update`,
 * `…/plugins/bulk-update`) names no version: the service installs whatever is newest when it runs
 * it, which may be a release the plan never saw. So a task whose plan judged the very version it
 * sends updates each item pinned (`PUT …/themes` or `…/plugins` `{name, update_version}`, one call per item), and its steps are read back
 * (`readBack`): the version the environment runs is recorded, and a step that runs another fails.
 * A task judges the version when it has
 * - a release age (`min_release_age`, `by_bump`): the age is that version's;
 * - `max_bump`, written in the task (the default, `major`, lets any numbered jump through): the jump
 *   is to that version;
 * - `rollout.staging_first` (`pinVersions`): live takes the version staging soaked, staging the one
 *   it stages, never a newer one that came meanwhile.
 * `only_vulnerable` judges the installed version, not the new one, and `skip_vulnerable_updates`
 * (on by default) the listing's flag, which every task has: neither pins, so that a task with no
 * policy keeps its bulk update, its plan and its report as they were. Such a task takes whatever is
 * newest when the service runs the update: if that matters, give it `max_bump`.
 */
/** A kind's update action (`themes.update`, `plugins.update`, `core.update`), made from its row of the kind table. */
export function itemsUpdate(row: KindRow): Action<ItemsUpdateWith> {
  const { kind, plural } = row;
  const writes = ITEM_WRITES[kind];
  const namesOf = (step: StepOutcome) => itemsOf(writes, step);
  return {
    name: `${plural}.update`,
    summary: writes.summary,
    scope: 'environment',
    endpoint: row.bulk ?? row.pinned,
    alsoSends: row.bulk ? [row.pinned] : [],
    creates: false,
    stagesFirst: true,
    items: kind,
    example: { ...(row.only ? {} : { [plural]: [row.example] }), max_bump: 'minor' },
    withSchema: withBlock({ ...writes.pick, ...policyFields(row) }),
    check: (w) => checkPolicy(w),
    reads: (w) => (usesReleaseAge(w) ? ['first_seen'] : []),
    // WordPress is offered per task: the newest version the fleet runs or the task names, within its rules.
    // Its command prints nothing back: only the version read again once it ended says what it did.
    ...(row.only ? { offer: (env, w) => offered(env, kind, w), waits: true as const } : {}),
    // `verify: true`: an item this step updated still shows an update available in a fresh listing
    // (a pinned one: runs another version than the one sent, readBack's rule).
    verify(step, listing) {
      const pinned = writes.pinnedOf(step.body);
      if (pinned) return differs(pinned, runsOf(row, step, listing)[0]);
      const still = stillAvailable(row, step, listing);
      return still.length > 0 ? `the listing still shows an update available for ${still.join(', ')}` : undefined;
    },
    // Every item write is read back whatever `verify` says: an update the service ran while the site
    // did not move (a premium item without its licence) is the most common false success.
    readBack: (step, listing) => readBackOf(row, step, runsOf(row, step, listing)),
    // A pinned step the listing confirmed is read again: the report records what the environment runs.
    readsBackConfirmed: (step) => writes.pinnedOf(step.body) !== undefined,
    ...(writes.followUp ? { followUp: (body: unknown, named: readonly string[] | undefined) => writes.followUp!(body, named) } : {}),
    ...(row.listingConfirms ? { confirmBatch: confirmByListing(row) } : {}),
    // The versions the policy judged are the ones the update moved between.
    record: (step) => ({ heading: row.heading, text: step.precondition ?? `${namesOf(step).join(', ')} updated` }),
    reasonParts,
    expandEnvironment(env, ctx) {
      const wanted = ctx.with[plural as 'themes' | 'plugins'];
      const excluded = ctx.with.exclude;
      // A kind of one item (WordPress) has no slug to pick; the others are picked by `<plural>:` minus `exclude:`.
      const picked = (name: string) => row.only !== undefined || (matchesAny(name, wanted) && !(excluded !== undefined && matchesAny(name, excluded)));
      // WordPress the site listing does not show for this environment was not looked at: said so, not "no update available".
      if (row.only !== undefined && env.items[kind] === undefined)
        return [{ skip: `the site listing shows no WordPress version for this environment: not checked` }];
      const available = installedOf(env, kind).filter((t) => t.update_available && picked(t.name));
      const history = { env, withholding: ctx.withholding };
      const judged = available.map((item) => ({ item, judgement: judgeUpdate(item, ctx.with, ctx.releases, history) }));
      const update = judged.flatMap(({ item, judgement }) => (judgement.send ? [item] : []));
      const held = judged.flatMap(({ item, judgement }) => (judgement.send ? [] : [`${item.name}: ${judgement.reason}`]));
      const decisions = judged.flatMap(({ judgement: j }) => (j.send ? (j.early ?? []) : (j.decision ?? [])));
      const early = decisions.filter((d) => !d.held).map((d) => `${nameOf(d)}: ${describeDecision(d)}`);
      const note = [listed(LEFT_ALONE, held), listed(SENT_EARLY, early)].filter(Boolean).join(ITEM_SEPARATOR) || undefined;
      const withheld = judged.flatMap(({ judgement: j }) => (!j.send && j.withheld ? [j.withheld] : []));
      const ages = { ...(decisions.length > 0 ? { release_age: decisions } : {}), ...(withheld.length > 0 ? { withheld } : {}) };
      if (update.length === 0) return [{ skip: note ?? `no ${kind} update available`, ...ages }];
      if (writes.bulk && !pins(ctx.with, ctx.pinVersions)) return [{ ...updateOf(kind, writes, env.id, update, note), ...ages }];
      // One call per item; the environment's note and dates go with its first.
      const one = (t: InstalledItem) => pinnedUpdate(row, writes, env.id, t);
      return update.map((t, i) => (i === 0 ? { ...one(t), ...(note ? { note } : {}), ...ages } : one(t)));
    },
  };
}

/** The environment as a task's policy offers its WordPress: one version chosen of those known (item-writes.ts offerOf). */
function offered(env: Environment, kind: Kind, w: ItemsUpdateWith): Environment {
  const items = env.items[kind];
  if (!items) return env;
  return {
    ...env,
    items: { ...env.items, [kind]: items.map((t) => offerOf(t, w.versions, (v) => judgeUpdate({ ...t, update_version: v }, w, undefined).send)) },
  };
}

/**
 * One read of the listing, filtered to the items being updated, settles every environment that no
 * longer shows their update available: the same rule as verify. Only for a kind whose company listing
 * shows a write when its operation ends (`KindRow.listingConfirms`).
 */
function confirmByListing(row: KindRow): BatchConfirm {
  const writes = ITEM_WRITES[row.kind];
  return {
    searches(steps) {
      const names = [...new Set(steps.flatMap((s) => itemsOf(writes, s)))].sort();
      // A search matches a name or a title anywhere: a few names are a read each, many the whole listing.
      return names.length <= MAX_SEARCHES ? names : [];
    },
    shows(step, listing) {
      const env = listing.environments.find((e) => e.id === step.target.env_id);
      const installed = env ? installedOf(env, row.kind) : [];
      // A pinned update is done when the environment runs that version (another one is polled, and read back).
      const pinned = writes.pinnedOf(step.body);
      if (pinned) return installed.some((t) => t.name === pinned.name && t.version === pinned.update_version);
      return env !== undefined && itemsOf(writes, step).every((name) => installed.some((t) => t.name === name && !t.update_available));
    },
  };
}

/** A note or skip lists the items left alone, then those sent before their age: each counts apart in the summary. */
function reasonParts(reason: string): string[] {
  let prefix = NOTE_PREFIXES.find((p) => reason.startsWith(p));
  if (prefix === undefined) return [reason];
  return reason.split(ITEM_SEPARATOR).map((part) => {
    const own = NOTE_PREFIXES.find((p) => part.startsWith(p));
    prefix = own ?? prefix!;
    return own === undefined ? `${prefix}${part}` : part;
  });
}

/** Whether a task's plan judged the version each update installs (see the top of this file). */
export function pins(w: ItemsUpdateWith, pinVersions: true | undefined): boolean {
  return pinVersions === true || usesReleaseAge(w) || w.max_bump !== undefined;
}

/** The pinned update of one item to the version the plan judged. */
function pinnedUpdate(row: KindRow, writes: ItemWrites, envId: string, t: InstalledItem): Expansion {
  return {
    request: writes.pinned(envId, t),
    precondition: `${t.name} ${t.version} → ${t.update_version}`,
    key: `${row.kind}=${t.name}`,
    items: [t.name],
    updates: [changeOf(row.kind, t)],
  };
}

function changeOf(kind: Kind, t: InstalledItem): ItemChange {
  return { ...refOf(kind, t.name), from: t.version, to: t.update_version };
}

function updateOf(kind: Kind, writes: ItemWrites, envId: string, update: InstalledItem[], note: string | undefined): Expansion {
  return {
    request: writes.bulk!(
      envId,
      update.map((t) => t.name),
    ),
    note,
    // The body names no version: a saved plan must not install a newer one than was reviewed. These
    // are the versions the policy judged, so a release that moves them moves the judgement too.
    precondition: update.map((t) => `${t.name} ${t.version} → ${t.update_version}`).join(', '),
    updates: update.map((t) => changeOf(kind, t)),
  };
}

const LEFT_ALONE = 'left alone: ';
/** Updates sent though younger than their age (release age: security_bypass, max_hold). */
const SENT_EARLY = 'sent before its age: ';
const NOTE_PREFIXES = [LEFT_ALONE, SENT_EARLY];
const ITEM_SEPARATOR = '; ';

/** `left alone: a: why; b: why`, or nothing for an empty list. */
function listed(prefix: string, parts: string[]): string {
  return parts.length > 0 ? `${prefix}${parts.join(ITEM_SEPARATOR)}` : '';
}

/** Past this many items in a batch, one read of the whole listing costs less than a search each. */
const MAX_SEARCHES = 3;

/** The items a step updates: a pinned update's one, or the bulk body's list. */
function itemsOf(writes: ItemWrites, step: StepOutcome): string[] {
  const pinned = writes.pinnedOf(step.body);
  return pinned ? [pinned.name] : writes.bulkNames(step.body);
}

/** What the listing shows the step's environment runs of its items (an item gone from it: none). */
function runsOf(row: KindRow, step: StepOutcome, listing: Inventory): ItemVersion[] {
  const env = listing.environments.find((e) => e.id === step.target.env_id);
  const installed = env ? installedOf(env, row.kind) : [];
  return itemsOf(ITEM_WRITES[row.kind], step).flatMap((name) => installed.filter((t) => t.name === name).map((t) => ({ name, version: t.version })));
}

/**
 * What the read back of a write says, as a decision table: the first row that matches decides.
 *
 * | what the environment runs                                     | verdict                         |
 * | an item still on the version the write replaced               | `not_updated` (stays, in words) |
 * | a pinned item on another version than was judged, or unlisted | fails, saying which (differs)   |
 * | a bulk item the environment no longer lists                   | fails, saying which             |
 * | anything else (a bulk item moved, to whatever was newest)     | done                            |
 */
function readBackOf(row: KindRow, step: StepOutcome, runs: ItemVersion[]): ReadBack {
  const version = (name: string) => runs.find((r) => r.name === name)?.version;
  const stays = writtenUpdates(row.kind, step).flatMap((u) => {
    const name = nameOf(u);
    return version(name) === u.from ? [{ name, version: u.from }] : [];
  });
  if (stays.length > 0) return { runs, stays, differs: notMovedWords(row, stays) };
  const pinned = ITEM_WRITES[row.kind].pinnedOf(step.body);
  const gone = itemsOf(ITEM_WRITES[row.kind], step).find((name) => version(name) === undefined);
  const difference = pinned ? differs(pinned, runs[0]) : gone && `the environment does not list ${gone}`;
  return { runs, ...(difference ? { differs: difference } : {}) };
}

/** `jetpack stays on 3.0.0: the service ran the update, the site did not move; a premium plugin needs its licence on the site`. */
function notMovedWords(row: KindRow, stays: ItemVersion[]): string {
  const each = stays.map((s) => `${s.name} stays on ${s.version}`).join(', ');
  return `${each}: the service ran the update, the site did not move; ${row.notMoved}`;
}

/** Why an environment does not run the version judged, in words; undefined when it does. */
function differs(pinned: { name: string; update_version: string }, runs: ItemVersion | undefined): string | undefined {
  if (runs?.version === pinned.update_version) return undefined;
  const now = runs ? `runs ${pinned.name} ${runs.version}` : `does not list ${pinned.name}`;
  return `the environment ${now}, not ${pinned.update_version} as judged`;
}

/** The step's items the listing still shows an update available for. */
function stillAvailable(row: KindRow, step: StepOutcome, listing: Inventory): string[] {
  const env = listing.environments.find((e) => e.id === step.target.env_id);
  const installed = env ? installedOf(env, row.kind) : [];
  return itemsOf(ITEM_WRITES[row.kind], step).filter((name) => installed.some((t) => t.name === name && t.update_available));
}

/**
 * The updates a write of a kind sent, with their versions, from what its step keeps: `updates` where
 * the plan put them (health.on_broken: isolate), else the pinned body's item and version, else the
 * bulk body's items with the versions its precondition (written here, `updateOf`) judged. Used after a
 * run, by what it records (quarantine, retries): an item the words do not name is not guessed at.
 */
export function writtenUpdates(kind: Kind, step: { body?: unknown; precondition?: string; updates?: ItemChange[] }): ItemChange[] {
  if (step.updates) return step.updates;
  const writes = ITEM_WRITES[kind];
  const judged = new Map(
    (step.precondition ?? '').split(', ').flatMap((part) => {
      const m = /^(\S+) (\S+) → (\S+)$/.exec(part);
      return m ? [[m[1]!, { from: m[2]!, to: m[3]! }] as const] : [];
    }),
  );
  const pinned = writes.pinnedOf(step.body);
  if (pinned) return [{ ...refOf(kind, pinned.name), from: judged.get(pinned.name)?.from ?? '', to: pinned.update_version }];
  return writes.bulkNames(step.body).flatMap((name) => {
    const v = judged.get(name);
    return v ? [{ ...refOf(kind, name), ...v }] : [];
  });
}
