import { UsageError } from '../errors.js';
import { hashText } from './random.js';

/**
 * WordPress core, as the simulator runs it on each environment. The API has no core endpoint
 * (real-service-notes.md, "WordPress core"): the site listing shows each environment's
 * `wordpress_version`, and `wp core update` through the WP-CLI endpoint changes it when its operation
 * completes, printing nothing back. Versions are drawn from a hash of the environment id, never from the
 * fleet's seeded stream, so a seed's themes and plugins stay what they were before core was modelled.
 */

/** The releases known by default, oldest first. */
export const CORE_VERSIONS: readonly string[] = ['6.3.1', '6.4.3', '6.5.5', '6.6.2', '6.7.1', '6.7.2'];

export interface CoreReleases {
  /** Every release `wp core update --version=X` installs, oldest first; the last is what `wp core update` installs. */
  releases: readonly string[];
  /** The releases the generated environments run: all of them but a `latest` that none runs yet. */
  installed: readonly string[];
}

/** WP-CLI's error when the environment has no WordPress (a plain environment). */
export const NOT_INSTALLED = 'Error: This does not seem to be a WordPress installation.';
/** What WP-CLI prints when wordpress.org has no such release (its download answers 404). */
export const DOWNLOAD_FAILED = 'Error: Download failed.';

const VERSION = /^\d{1,3}\.\d{1,3}(\.\d{1,3})?$/;

/** Compares two release numbers part by part (`6.10` is after `6.9`; `6.7` is `6.7.0`). */
export function compareVersions(a: string, b: string): number {
  const [pa, pb] = [a.split('.').map(Number), b.split('.').map(Number)];
  for (let i = 0; i < 3; i++) if ((pa[i] ?? 0) !== (pb[i] ?? 0)) return (pa[i] ?? 0) - (pb[i] ?? 0);
  return 0;
}

/**
 * The catalogue of `versions` (`--core-versions`, any order), and `latest` (`--core-latest`): a release
 * newer than all of them that `wp core update` installs but no environment runs yet.
 */
export function coreReleases(versions: readonly string[] = CORE_VERSIONS, latest?: string): CoreReleases {
  const bad = [...versions, ...(latest === undefined ? [] : [latest])].find((v) => !VERSION.test(v));
  if (bad !== undefined) throw new UsageError(`WordPress version ${JSON.stringify(bad)}: expected MAJOR.MINOR or MAJOR.MINOR.PATCH, e.g. 6.7.2`);
  if (versions.length === 0) throw new UsageError('--core-versions: give at least one WordPress version');
  const installed = [...new Set(versions)].sort(compareVersions);
  if (latest !== undefined && compareVersions(latest, installed.at(-1)!) <= 0)
    throw new UsageError(`--core-latest ${latest}: must be newer than every --core-versions release (newest ${installed.at(-1)})`);
  return { releases: latest === undefined ? installed : [...installed, latest], installed };
}

/** Shares (of 32) of the environments on the newest release, the one before, and so on: most current, some a minor or more behind. */
const SHARES = [18, 8, 2, 2, 1, 1];

/** The release a generated environment runs, from its id: what fewer releases leave over goes to the newest. */
export function drawnCoreVersion(envId: string, installed: readonly string[]): string {
  let bucket = hashText(`core:${envId}`) % 32;
  const shares = SHARES.slice(0, installed.length);
  shares[0]! += 32 - shares.reduce((a, b) => a + b, 0);
  for (let back = 0; back < shares.length; back++) {
    bucket -= shares[back]!;
    if (bucket < 0) return installed[installed.length - 1 - back]!;
  }
  return installed.at(-1)!;
}

/** `--break-core VERSION` (or `latest`: the newest release), checked against the catalogue. */
export function parseCoreBreak(core: CoreReleases, text: string): string {
  const version = text.trim() === 'latest' ? core.releases.at(-1)! : text.trim();
  if (!core.releases.includes(version)) throw new UsageError(`--break-core ${text}: not a WordPress release of the simulator (${core.releases.join(', ')})`);
  return version;
}

/** What a `wp core …` command does: fail with WP-CLI's error, or succeed, moving the version or not. */
export type CoreEffect = { failsWith: string } | { moveTo?: string };

/** The options `wp core update` takes that change nothing here (they matter to a real download). */
const IGNORED = new Set(['--locale', '--insecure', '--skip-plugins', '--skip-themes', '--skip-packages', '--quiet']);

/**
 * What `words` (the command split on whitespace) does to an environment running `current` (null: no
 * WordPress), or undefined when it is no `wp core` command. `wp core update` goes to the newest release,
 * `--minor` to the newest of the current branch, `--version=X` to X; to the same or an older one only with
 * `--force` (WP-CLI says the site is up to date otherwise). A release wordpress.org does not have fails.
 */
export function coreEffect(core: CoreReleases, current: string | null, words: readonly string[]): CoreEffect | undefined {
  if (words[0] !== 'wp' || words[1] !== 'core') return undefined;
  if (current === null) return { failsWith: NOT_INSTALLED };
  if (words[2] !== 'update' && words[2] !== 'upgrade') return {};
  const flags = new Map<string, string>();
  for (const word of words.slice(3)) {
    const [name = '', value = ''] = word.split(/=(.*)/s);
    if (!name.startsWith('--')) return { failsWith: DOWNLOAD_FAILED }; // a zip file: none is on the environment
    if (!IGNORED.has(name) && !['--version', '--force', '--minor'].includes(name)) return { failsWith: `Error: Parameter errors: unknown ${name} parameter` };
    flags.set(name, value);
  }
  const branch = current.split('.').slice(0, 2).join('.');
  const target = flags.has('--version')
    ? flags.get('--version')!
    : flags.has('--minor')
      ? core.releases.filter((v) => v.split('.').slice(0, 2).join('.') === branch).at(-1)
      : core.releases.at(-1);
  if (target === undefined) return {}; // no release of its branch is known: nothing to update to
  if (!core.releases.includes(target)) return { failsWith: DOWNLOAD_FAILED };
  if (compareVersions(target, current) <= 0 && !flags.has('--force')) return {};
  return { moveTo: target };
}
