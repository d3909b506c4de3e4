import { DOWNLOAD_FAILED } from './core.js';
import { catalogOf, installedOf, type Fleet, type ItemKind, type SimEnvironment } from './fleet.js';

/**
 * `wp plugin install <slug> --version=<v> --force` and `wp theme install …`: WP-CLI fetches that
 * version from WordPress.org and writes its files over the installed ones (real-service-notes.md,
 * "Putting one item back without a restore"). Only the item's files move: the environment's data
 * (its orders, shop.ts) stays as it is. The simulator's WordPress.org is its catalogue: a slug or a
 * version it does not hold cannot be fetched.
 */
export type InstallEffect = { failsWith: string } | { item?: { kind: ItemKind; name: string; version: string } };

/** WP-CLI's words when WordPress.org has no such item (its API answers "not found"). */
const NOT_FOUND: Record<ItemKind, string> = { plugin: 'Error: No plugins installed.', theme: 'Error: No themes installed.' };

const KINDS: ReadonlySet<string> = new Set(['plugin', 'theme']);
/** The flags `install` takes that change nothing here (they matter to a real download or activation). */
const IGNORED = new Set(['--activate', '--activate-network', '--insecure', '--quiet']);

/**
 * What `words` (the command split on whitespace) does to `env`, or undefined when it is no
 * `wp plugin|theme install` command. An installed item is written over only with `--force`
 * (WP-CLI warns and leaves it otherwise); one not installed is installed, inactive.
 */
export function installEffect(fleet: Fleet, env: SimEnvironment, words: readonly string[]): InstallEffect | undefined {
  if (words[0] !== 'wp' || !KINDS.has(words[1] ?? '') || words[2] !== 'install') return undefined;
  const kind = words[1] as ItemKind;
  const [slug, ...rest] = words.slice(3);
  const flags = new Map<string, string>();
  for (const word of rest) {
    const [name = '', value = ''] = word.split(/=(.*)/s);
    if (!name.startsWith('--')) return { failsWith: `Error: installing more than one ${kind} at once is not simulated` };
    if (!IGNORED.has(name) && name !== '--version' && name !== '--force') return { failsWith: `Error: Parameter errors: unknown ${name} parameter` };
    flags.set(name, value);
  }
  const known = slug === undefined ? undefined : catalogOf(fleet, kind).get(slug);
  if (!known) return { failsWith: NOT_FOUND[kind] };
  const version = flags.get('--version') ?? known.versions.at(-1)!;
  if (!known.versions.includes(version)) return { failsWith: DOWNLOAD_FAILED };
  const installed = installedOf(env, kind).has(known.name);
  if (installed && !flags.has('--force')) return {};
  return { item: { kind, name: known.name, version } };
}

/** Writes an install's files: the version moves, the item's status (active or not) stays. */
export function applyInstall(env: SimEnvironment, item: { kind: ItemKind; name: string; version: string }): void {
  const items = installedOf(env, item.kind);
  const was = items.get(item.name);
  items.set(item.name, { status: 'inactive', autoUpdateType: 'none', ...was, version: item.version, updateStatus: 'none' });
}
