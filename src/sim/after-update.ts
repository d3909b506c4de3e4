import { compareVersions } from './core.js';
import type { SimEnvironment } from './fleet.js';

/**
 * What follows an update on a simulated environment: WordPress's database step and a plugin's own.
 * `wp core update` moves WordPress's files and leaves its database as it was (real-service-notes.md,
 * "After an update"): across an x.y release the dashboard then says "Database update required" until
 * `wp core update-db` runs. WooCommerce's own step is `wp wc update`.
 */

/** WP-CLI's error for `--network` on an environment that is no multisite (the simulator has none). */
export const NOT_MULTISITE = 'Error: This is not a multisite installation.';
/** WP-CLI's error for a command of a plugin the environment does not have. */
export const NOT_REGISTERED = (command: string) => `Error: '${command}' is not a registered wp command. See 'wp help' for available commands.`;
/** What the simulator prints for `wp core update-db` when the database is upgraded (its `--core-update-db-fails` prints an error instead). */
export const DB_UPDATE_FAILED = 'Error: WordPress database update failed.';

/** The x.y branch of a release: WordPress's database changes only across one. */
const branch = (version: string) => version.split('.').slice(0, 2).join('.');

/** True when WordPress's files are a newer x.y release than its database: wp-admin says "Database update required". */
export function databaseUpdateRequired(env: Pick<SimEnvironment, 'wordpressVersion' | 'wordpressDb'>): boolean {
  if (env.wordpressVersion === null || env.wordpressDb === undefined) return false;
  return compareVersions(branch(env.wordpressVersion), branch(env.wordpressDb)) > 0;
}

/** What a command that follows an update does: fail with WP-CLI's error, or change the environment once its operation ends. */
export type AfterUpdateEffect = { failsWith: string } | { apply(env: SimEnvironment): void };

/**
 * `wp core update-db` (its `--dry-run` changes nothing) and `wp wc update`; undefined for any other
 * command. `failsDb`: the simulator's `coreUpdateDbFails`, a database step that fails.
 */
export function afterUpdateEffect(env: SimEnvironment, words: readonly string[], failsDb: boolean): AfterUpdateEffect | undefined {
  if (words[0] !== 'wp') return undefined;
  if (words[1] === 'core' && words[2] === 'update-db') {
    if (env.wordpressVersion === null) return undefined; // core.ts answers for an environment without WordPress
    const flags = words.slice(3);
    if (flags.includes('--network')) return { failsWith: NOT_MULTISITE };
    const unknown = flags.find((f) => f !== '--dry-run');
    if (unknown !== undefined) return { failsWith: `Error: Parameter errors: unknown ${unknown.split('=')[0]} parameter` };
    if (failsDb) return { failsWith: DB_UPDATE_FAILED };
    return { apply: (e) => (flags.includes('--dry-run') ? undefined : delete e.wordpressDb) };
  }
  if (words[1] === 'wc' && words[2] === 'update' && words.length === 3)
    return env.plugins.has('woocommerce') ? { apply: () => undefined } : { failsWith: NOT_REGISTERED('wc') };
  return undefined;
}

/** Before WordPress's files move: its database stays on the release it was on (the first one, if it moves twice). */
export function filesMove(env: SimEnvironment, to: string): void {
  if (env.wordpressVersion !== null) env.wordpressDb ??= env.wordpressVersion;
  env.wordpressVersion = to;
  if (!databaseUpdateRequired(env)) delete env.wordpressDb; // same branch (or back): nothing for update-db to do
}
