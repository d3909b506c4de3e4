import type { SimEnvironment } from './fleet.js';

/**
 * What a WP-CLI command prints on an environment, for the few commands fleet maintenance runs.
 * Public sources disagree on whether the real service returns stdout at all, so anything else prints
 * nothing (the operation then carries `data: null`) and a client must expect either.
 *
 * Everything here is derived from a hash of the environment id, never from the fleet's seeded
 * generator: drawing more numbers from it would change every seeded fleet.
 */

/** The WordPress versions environments run: most the newer one, about one in eight the older. */
export const WP_VERSIONS = { current: '6.4.3', older: '6.3.1' } as const;

/** Keyed by the command with its whitespace normalised. A Map, so that no command finds Object.prototype. */
const OUTPUT = new Map<string, (env: SimEnvironment) => string>([
  ['wp core version', (env) => wordPressVersion(env.id)],
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

/** The WordPress version an environment runs (`wp core version`). */
export function wordPressVersion(envId: string): string {
  return hash(envId) % 8 === 0 ? WP_VERSIONS.older : WP_VERSIONS.current;
}

/** FNV-1a, 32 bits: spreads neighbouring ids well enough for a one-in-eight share. */
function hash(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 0x01000193);
  return h >>> 0;
}
