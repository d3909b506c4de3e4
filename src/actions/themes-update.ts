import { matchesAny } from '../util/glob.js';
import type { Action, StepOutcome } from './action.js';
import type { Inventory } from '../inventory/inventory.js';
import { globs, withBlock } from './schema-parts.js';

/**
 * One bulk update per environment, of the themes the listing shows an update `available` for.
 * An update whose target version is itself flagged vulnerable is left alone by default: moving from
 * one vulnerable version to another is not a fix, and a person should choose.
 */
export const themesUpdate: Action<{ themes?: string | string[]; skip_vulnerable_updates?: boolean }> = {
  name: 'themes.update',
  summary: 'update themes where the listing shows an update available (PUT …/themes/bulk-update)',
  scope: 'environment',
  endpoint: 'bulkUpdateThemes',
  creates: false,
  example: { themes: ['twenty*'] },
  withSchema: withBlock({
    themes: { ...globs, description: 'only these theme slugs (globs); default all' },
    skip_vulnerable_updates: { type: 'boolean', default: true, description: 'leave alone updates whose version is flagged vulnerable' },
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
  expandEnvironment(env, ctx) {
    const skipVulnerable = ctx.with.skip_vulnerable_updates ?? true;
    const available = env.themes.filter((t) => t.update_available && matchesAny(t.name, ctx.with.themes));
    const leftAlone = skipVulnerable ? available.filter((t) => t.update_vulnerable) : [];
    const update = available.filter((t) => !leftAlone.includes(t));
    const vulnerableNote = leftAlone.length
      ? `left alone (update version flagged vulnerable): ${leftAlone.map((t) => `${t.name} ${t.version} → ${t.update_version}`).join(', ')}`
      : undefined;
    if (update.length === 0) return [{ skip: vulnerableNote ?? 'no theme update available' }];
    return [
      {
        request: { endpoint: 'bulkUpdateThemes', params: { env_id: env.id }, body: { themes: update.map((t) => ({ name: t.name })) } },
        note: vulnerableNote,
        // The body names no version: a saved plan must not install a newer one than was reviewed.
        precondition: update.map((t) => `${t.name} ${t.version} → ${t.update_version}`).join(', '),
      },
    ];
  },
};

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
