import { matchesAny } from '../util/glob.js';
import { describeDecision, usesReleaseAge } from '../inventory/release-age.js';
import type { Action, Expansion, StepOutcome } from './action.js';
import type { Inventory, InstalledTheme } from '../inventory/inventory.js';
import { withBlock } from './schema-parts.js';
import { checkPolicy, judgeUpdate, POLICY_FIELDS, type ThemesUpdateWith } from './theme-update-policy.js';

/**
 * One bulk update per environment, of the themes the listing shows an update `available` for, as the
 * task's update policy allows (theme-update-policy.ts). An update whose target version is itself
 * flagged vulnerable is left alone by default: moving from one vulnerable version to another is not a
 * fix, and a person should choose. `only_vulnerable` keeps to installed versions flagged vulnerable
 * (security-only nights); `max_bump` leaves updates that jump further than a patch or minor release
 * (see util/theme-version.ts); `min_release_age` and `by_bump` let new versions age first
 * (inventory/release-age.ts), which needs the first-seen table the plan is given (`reads`).
 */
export const themesUpdate: Action<ThemesUpdateWith> = {
  name: 'themes.update',
  summary: 'update themes where the listing shows an update available, within an update policy (PUT …/themes/bulk-update)',
  scope: 'environment',
  endpoint: 'bulkUpdateThemes',
  creates: false,
  stagesFirst: true,
  example: { themes: ['twenty*'], max_bump: 'minor' },
  withSchema: withBlock(POLICY_FIELDS),
  check: (w) => checkPolicy(w),
  reads: (w) => (usesReleaseAge(w) ? ['first_seen'] : []),
  // `verify: true`: a theme this step updated still shows an update available in a fresh listing.
  verify(step, listing) {
    const still = stillAvailable(step, listing);
    return still.length > 0 ? `the listing still shows an update available for ${still.join(', ')}` : undefined;
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
    return [{ ...updateOf(env.id, update, note), ...ages }];
  },
};

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
  return ((step.body as { themes?: { name: string }[] } | undefined)?.themes ?? []).map((t) => t.name);
}

/** The step's themes the listing still shows an update available for. */
function stillAvailable(step: StepOutcome, listing: Inventory): string[] {
  const env = listing.environments.find((e) => e.id === step.target.env_id);
  return themesOf(step).filter((name) => env?.themes.some((t) => t.name === name && t.update_available));
}
