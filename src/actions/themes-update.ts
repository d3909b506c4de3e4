import { matchesAny } from '../util/glob.js';
import { describeDecision, usesReleaseAge } from '../inventory/release-age.js';
import type { Action, Expansion, ItemVersion, StepOutcome } from './action.js';
import type { Inventory, InstalledTheme } from '../inventory/inventory.js';
import { withBlock } from './schema-parts.js';
import { checkPolicy, judgeUpdate, POLICY_FIELDS, type ThemesUpdateWith } from './theme-update-policy.js';

/**
 * The themes the listing shows an update `available` for, as the task's update policy allows
 * (theme-update-policy.ts). An update whose target version is itself flagged vulnerable is left alone
 * by default: moving from one vulnerable version to another is not a fix, and a person should choose.
 * `only_vulnerable` keeps to installed versions flagged vulnerable (security-only nights); `max_bump`
 * leaves updates that jump further than a patch or minor release (see util/theme-version.ts);
 * `min_release_age` and `by_bump` let new versions age first (inventory/release-age.ts), which needs
 * the first-seen table the plan is given (`reads`).
 *
 * What was judged is what gets installed. The bulk update (`PUT …/themes/bulk-update`) names no
 * version: the service installs whatever is newest when it runs it, which may be a release the plan
 * never saw. So a task whose plan judged the very version it sends updates each theme pinned
 * (`PUT …/themes` `{name, update_version}`, one call per theme), and its steps are read back
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
export const themesUpdate: Action<ThemesUpdateWith> = {
  name: 'themes.update',
  summary:
    'update themes where the listing shows an update available, within an update policy (PUT …/themes/bulk-update; a version the policy judged: PUT …/themes, pinned)',
  scope: 'environment',
  endpoint: 'bulkUpdateThemes',
  alsoSends: ['updateTheme'],
  creates: false,
  stagesFirst: true,
  example: { themes: ['twenty*'], max_bump: 'minor' },
  withSchema: withBlock(POLICY_FIELDS),
  check: (w) => checkPolicy(w),
  reads: (w) => (usesReleaseAge(w) ? ['first_seen'] : []),
  // `verify: true`: a theme this step updated still shows an update available in a fresh listing
  // (a pinned one: runs another version than the one sent, readBack's rule).
  verify(step, listing) {
    const pinned = pinnedOf(step);
    if (pinned) return differs(pinned, runsOf(step, listing)[0]);
    const still = stillAvailable(step, listing);
    return still.length > 0 ? `the listing still shows an update available for ${still.join(', ')}` : undefined;
  },
  // A pinned update is read back whatever `verify` says: the report records what the environment runs.
  readBack(step, listing) {
    const pinned = pinnedOf(step);
    if (!pinned) return undefined;
    const runs = runsOf(step, listing);
    const difference = differs(pinned, runs[0]);
    return { runs, ...(difference ? { differs: difference } : {}) };
  },
  // One read of the listing, filtered to the themes being updated, settles every environment that no
  // longer shows their update available: the same rule as verify.
  confirmBatch: {
    searches(steps) {
      const names = [...new Set(steps.flatMap(themesOf))].sort();
      // A search matches a name or a title anywhere: a few names are a read each, many the whole listing.
      return names.length <= MAX_SEARCHES ? names : [];
    },
    shows(step, listing) {
      const env = listing.environments.find((e) => e.id === step.target.env_id);
      // A pinned update is done when the environment runs that version (another one is polled, and read back).
      const pinned = pinnedOf(step);
      if (pinned) return env?.themes.some((t) => t.name === pinned.name && t.version === pinned.update_version) ?? false;
      return env !== undefined && themesOf(step).every((name) => env.themes.some((t) => t.name === name && !t.update_available));
    },
  },
  // The versions the policy judged are the ones the update moved between.
  record: (step) => ({ heading: 'Theme updates', text: step.precondition ?? `${themesOf(step).join(', ')} updated` }),
  // A note or skip lists the themes left alone, then those sent before their age: each counts apart in the summary.
  reasonParts(reason) {
    let prefix = NOTE_PREFIXES.find((p) => reason.startsWith(p));
    if (prefix === undefined) return [reason];
    return reason.split(THEME_SEPARATOR).map((part) => {
      const own = NOTE_PREFIXES.find((p) => part.startsWith(p));
      prefix = own ?? prefix!;
      return own === undefined ? `${prefix}${part}` : part;
    });
  },
  expandEnvironment(env, ctx) {
    const available = env.themes.filter((t) => t.update_available && matchesAny(t.name, ctx.with.themes));
    const judged = available.map((theme) => ({ theme, judgement: judgeUpdate(theme, ctx.with, ctx.releases) }));
    const update = judged.flatMap(({ theme, judgement }) => (judgement.send ? [theme] : []));
    const held = judged.flatMap(({ theme, judgement }) => (judgement.send ? [] : [`${theme.name}: ${judgement.reason}`]));
    const decisions = judged.flatMap(({ judgement: j }) => (j.send ? (j.early ?? []) : (j.decision ?? [])));
    const early = decisions.filter((d) => !d.held).map((d) => `${d.theme}: ${describeDecision(d)}`);
    const note = [listed(LEFT_ALONE, held), listed(SENT_EARLY, early)].filter(Boolean).join(THEME_SEPARATOR) || undefined;
    const ages = decisions.length > 0 ? { release_age: decisions } : {};
    if (update.length === 0) return [{ skip: note ?? 'no theme update available', ...ages }];
    if (!pins(ctx.with, ctx.pinVersions)) return [{ ...updateOf(env.id, update, note), ...ages }];
    // One call per theme; the environment's note and dates go with its first.
    return update.map((t, i) => (i === 0 ? { ...pinnedUpdate(env.id, t), ...(note ? { note } : {}), ...ages } : pinnedUpdate(env.id, t)));
  },
};

/** Whether a task's plan judged the version each update installs (see the top of this file). */
export function pins(w: ThemesUpdateWith, pinVersions: true | undefined): boolean {
  return pinVersions === true || usesReleaseAge(w) || w.max_bump !== undefined;
}

/** The pinned update of one theme to the version the plan judged. */
function pinnedUpdate(envId: string, t: InstalledTheme): Expansion {
  return {
    request: { endpoint: 'updateTheme', params: { env_id: envId }, body: { name: t.name, update_version: t.update_version } },
    precondition: `${t.name} ${t.version} → ${t.update_version}`,
    key: `theme=${t.name}`,
    items: [t.name],
  };
}

function updateOf(envId: string, update: InstalledTheme[], note: string | undefined): Expansion {
  return {
    request: { endpoint: 'bulkUpdateThemes', params: { env_id: envId }, body: { themes: update.map((t) => ({ name: t.name })) } },
    note,
    // The body names no version: a saved plan must not install a newer one than was reviewed. These
    // are the versions the policy judged, so a release that moves them moves the judgement too.
    precondition: update.map((t) => `${t.name} ${t.version} → ${t.update_version}`).join(', '),
  };
}

const LEFT_ALONE = 'left alone: ';
/** Updates sent though younger than their age (release age: security_bypass, max_hold). */
const SENT_EARLY = 'sent before its age: ';
const NOTE_PREFIXES = [LEFT_ALONE, SENT_EARLY];
const THEME_SEPARATOR = '; ';

/** `left alone: a: why; b: why`, or nothing for an empty list. */
function listed(prefix: string, parts: string[]): string {
  return parts.length > 0 ? `${prefix}${parts.join(THEME_SEPARATOR)}` : '';
}

/** Past this many themes in a batch, one read of the whole listing costs less than a search each. */
const MAX_SEARCHES = 3;

function themesOf(step: StepOutcome): string[] {
  const pinned = pinnedOf(step);
  if (pinned) return [pinned.name];
  return ((step.body as { themes?: { name: string }[] } | undefined)?.themes ?? []).map((t) => t.name);
}

/** A pinned update's body (one theme, the version judged); undefined for a bulk update. */
function pinnedOf(step: StepOutcome): { name: string; update_version: string } | undefined {
  const body = step.body as { name?: unknown; update_version?: unknown } | undefined;
  return typeof body?.name === 'string' && typeof body.update_version === 'string' ? { name: body.name, update_version: body.update_version } : undefined;
}

/** What the listing shows the step's environment runs of its themes (a theme gone from it: none). */
function runsOf(step: StepOutcome, listing: Inventory): ItemVersion[] {
  const env = listing.environments.find((e) => e.id === step.target.env_id);
  return themesOf(step).flatMap((name) => env?.themes.filter((t) => t.name === name).map((t) => ({ name, version: t.version })) ?? []);
}

/** Why an environment does not run the version judged, in words; undefined when it does. */
function differs(pinned: { name: string; update_version: string }, runs: ItemVersion | undefined): string | undefined {
  if (runs?.version === pinned.update_version) return undefined;
  const now = runs ? `runs ${pinned.name} ${runs.version}` : `does not list ${pinned.name}`;
  return `the environment ${now}, not ${pinned.update_version} as judged`;
}

/** The step's themes the listing still shows an update available for. */
function stillAvailable(step: StepOutcome, listing: Inventory): string[] {
  const env = listing.environments.find((e) => e.id === step.target.env_id);
  return themesOf(step).filter((name) => env?.themes.some((t) => t.name === name && t.update_available));
}
