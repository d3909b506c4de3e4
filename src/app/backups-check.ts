import type { Backup } from '../api/types.js';
import { backupCreatedMs } from '../api/backup-time.js';
import { InvalidInputError, readingFirst } from '../errors.js';
import type { Environment } from '../inventory/inventory.js';
import { inventoryReader, readBackups, readInventory } from '../inventory/read.js';
import { matches } from '../plan/select.js';
import type { GlobalOptions } from './runtime.js';
import { withRuntime } from './run-scope.js';
import type { Selector } from '../playbook/types.js';

export interface EnvironmentBackups {
  site: string;
  environment: string;
  env_id: string;
  /**
   * The newest backup of each type, by type; `created_at` and `age_s` are null where the service's time
   * says none. `fresh`: whether this backup is younger than --max-age, its own, not the environment's.
   */
  newest: Record<string, { id: number; name: string; created_at: string | null; age_s: number | null; fresh: boolean }>;
  /** Whether some backup is younger than --max-age (true when no --max-age was given). */
  fresh: boolean;
}

/**
 * Newest backup per type, and whether any is younger than `maxAgeMs`, as of `now`. A backup whose
 * time cannot be read (backupCreatedMs) is listed, but makes no environment fresh.
 */
export function summarizeBackups(env: Environment, backups: Backup[], now: number, maxAgeMs: number | undefined): EnvironmentBackups {
  const timed = backups.map((b) => ({ b, at: backupCreatedMs(b.created_at) }));
  const newest: EnvironmentBackups['newest'] = {};
  for (const { b, at } of timed.sort((x, y) => (y.at ?? -Infinity) - (x.at ?? -Infinity))) {
    newest[b.type] ??= {
      id: b.id,
      name: b.name,
      created_at: at === undefined ? null : new Date(at).toISOString(),
      age_s: at === undefined ? null : Math.round((now - at) / 1000),
      fresh: maxAgeMs === undefined || (at !== undefined && now - at <= maxAgeMs),
    };
  }
  const youngest = Math.min(...timed.map(({ at }) => (at === undefined ? Infinity : now - at)));
  return { site: env.site, environment: env.name, env_id: env.id, newest, fresh: maxAgeMs === undefined || youngest <= maxAgeMs };
}

/**
 * What `sitefleet backups` reads: the listing, then each selected environment's backups (through the
 * rate budget), summarised as of now against `maxAgeMs`.
 */
export async function readBackupAges(globals: GlobalOptions, selector: Selector, maxAgeMs: number | undefined): Promise<EnvironmentBackups[]> {
  if (!globals.company) throw new InvalidInputError([{ path: 'company', message: 'no company: set SITEFLEET_COMPANY or pass --company' }]);
  const company = globals.company;
  return withRuntime(globals, company, async (runtime) => {
    const reader = inventoryReader(runtime.caller);
    const inventory = await readingFirst({ baseUrl: globals.baseUrl, company }, () => readInventory(reader, company));
    const envs = inventory.environments.filter((e) => matches(e, selector));
    const progress = globals.view.counter(envs.length, 'environments read');
    await readBackups(
      reader,
      inventory,
      envs.map((e) => e.id),
      () => progress.step(false),
    );
    progress.end();
    const now = Date.now();
    return envs.map((e) => summarizeBackups(e, inventory.backups?.[e.id] ?? [], now, maxAgeMs));
  });
}
