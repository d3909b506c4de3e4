import type { SimEnvironment } from './fleet.js';
import { hashText as hash } from './random.js';

/**
 * What a WP-CLI command prints on an environment, for the few commands fleet maintenance runs.
 * Public sources disagree on whether the real service returns stdout at all, so anything else prints
 * nothing (the operation then carries `data: null`) and a client must expect either.
 *
 * Everything here is the environment's state (its WordPress version, core.ts) or derived from a hash
 * of its id, never from the fleet's seeded generator: drawing more numbers from it would change every
 * seeded fleet.
 */

/** Keyed by the command with its whitespace normalised. A Map, so that no command finds Object.prototype. */
const OUTPUT = new Map<string, (env: SimEnvironment) => string>([
  // Only asked of an environment with WordPress: on one without, the command fails (core.ts).
  ['wp core version', (env) => env.wordpressVersion ?? ''],
  ['wp option get siteurl', (env) => `https://${env.domains[0]?.name ?? `${env.id}.hosting.example`}`],
  ['wp cache flush', () => 'Success: The cache was flushed.'],
  ['wp plugin list --status=active --format=count', (env) => String(3 + (hash(`plugins:${env.id}`) % 12))],
]);

/** What `command` prints on `env` (without a trailing newline), or null when the simulator has nothing to print. */
export function wpCliOutput(env: SimEnvironment, command: string): string | null {
  // Runs of whitespace mean what one space means to a shell.
  const print = OUTPUT.get(command.trim().split(/\s+/).join(' '));
  return print ? print(env) : null;
}
