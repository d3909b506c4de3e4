import { matchesAny } from '../util/glob.js';
import { BUMPS, versionJump, withinBump, type Bump } from '../util/theme-version.js';
import type { Action, Expansion, StepOutcome } from './action.js';
import type { Inventory, InstalledTheme } from '../inventory/inventory.js';
import { globs, withBlock } from './schema-parts.js';

type ThemesUpdateWith = {
  themes?: string | string[];
  skip_vulnerable_updates?: boolean;
  only_vulnerable?: boolean;
  max_bump?: Bump;
};

/**
 * One bulk update per environment, of the themes the listing shows an update `available` for, as the
 * task's update policy allows. An update whose target version is itself flagged vulnerable is left
 * alone by default: moving from one vulnerable version to another is not a fix, and a person should
 * choose. `only_vulnerable` keeps to installed versions flagged vulnerable (security-only nights);
 * `max_bump` leaves updates that jump further than a patch or minor release (see util/theme-version.ts).
 */
export const themesUpdate: Action<ThemesUpdateWith> = {
  name: 'themes.update',
  summary: 'update themes where the listing shows an update available, within an update policy (PUT …/themes/bulk-update)',
  scope: 'environment',
  endpoint: 'bulkUpdateThemes',
  creates: false,
  example: { themes: ['twenty*'], max_bump: 'minor' },
  withSchema: withBlock({
    themes: { ...globs, description: 'only these theme slugs (globs); default all' },
    skip_vulnerable_updates: { type: 'boolean', default: true, description: 'leave alone updates whose version is flagged vulnerable' },
    only_vulnerable: { type: 'boolean', default: false, description: 'update only themes whose installed version is flagged vulnerable' },
    max_bump: {
      enum: [...BUMPS],
      default: 'major',
      description: 'the largest version jump to take (4.1.0 → 4.2.0 is minor); a version not numbered as 1.2 or 1.2.3 passes only major',
    },
  }),
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
  // A note or skip lists the themes left alone: each counts apart in the summary.
  reasonParts(reason) {
    return reason.startsWith(LEFT_ALONE)
      ? reason
          .slice(LEFT_ALONE.length)
          .split(HELD_SEPARATOR)
          .map((part) => `${LEFT_ALONE}${part}`)
      : [reason];
  },
  expandEnvironment(env, ctx) {
    const available = env.themes.filter((t) => t.update_available && matchesAny(t.name, ctx.with.themes));
    const judged = available.map((t) => ({ theme: t, held: heldBack(t, ctx.with) }));
    const update = judged.filter((j) => j.held === undefined).map((j) => j.theme);
    const held = judged.filter((j) => j.held !== undefined).map((j) => `${j.theme.name}: ${j.held!}`);
    const note = held.length > 0 ? `${LEFT_ALONE}${held.join(HELD_SEPARATOR)}` : undefined;
    if (update.length === 0) return [{ skip: note ?? 'no theme update available' }];
    return [updateOf(env.id, update, note)];
  },
};

/**
 * Why the policy leaves this update alone, in words that name the versions it judged; undefined
 * when it may go. One reason each, the most basic first: a night that updates only vulnerable
 * installs says so before it weighs the update itself.
 */
function heldBack(t: InstalledTheme, policy: ThemesUpdateWith): string | undefined {
  if (policy.only_vulnerable === true && !t.version_vulnerable) return `installed version ${t.version} not vulnerable`;
  if ((policy.skip_vulnerable_updates ?? true) && t.update_vulnerable) return `update ${t.version} → ${t.update_version} flagged vulnerable`;
  const max = policy.max_bump ?? 'major';
  const jump = versionJump(t.version, t.update_version);
  if (withinBump(jump, max)) return undefined;
  const versions = `${t.version} → ${t.update_version}`;
  return jump === 'unnumbered'
    ? `update ${versions} not numbered as 1.2 or 1.2.3, beyond max_bump: ${max}`
    : `${jump} update ${versions} beyond max_bump: ${max}`;
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
const HELD_SEPARATOR = '; ';

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
