import type { Backup } from '../../api/types.js';
import { backupCreatedMs } from '../../api/backup-time.js';
import { InvalidInputError } from '../../errors.js';
import type { Environment } from '../../inventory/inventory.js';
import { inventoryReader, readBackups, readInventory } from '../../inventory/read.js';
import { matches } from '../../plan/select.js';
import { openRuntime, type GlobalOptions } from '../context.js';
import { formatDuration, Progress } from '../progress.js';
import { table } from '../render.js';
import { forCsv, jsonText, terminalName } from '../../util/safe-text.js';
import { selectorFrom, type SelectorFlags } from '../selector-flags.js';

export interface BackupsOptions extends SelectorFlags {
  maxAge?: string;
  format: 'table' | 'json' | 'csv';
}

export interface EnvironmentBackups {
  site: string;
  environment: string;
  env_id: string;
  /** The newest backup of each type, by type; `created_at` and `age_s` are null where the service's time says none. */
  newest: Record<string, { id: number; name: string; created_at: string | null; age_s: number | null }>;
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
    };
  }
  const youngest = Math.min(...timed.map(({ at }) => (at === undefined ? Infinity : now - at)));
  return { site: env.site, environment: env.name, env_id: env.id, newest, fresh: maxAgeMs === undefined || youngest <= maxAgeMs };
}

/** `sitefleet backups`: reads the listing, then each selected environment's backups (through the rate budget). Returns the exit code. */
export async function checkBackups(globals: GlobalOptions, opts: BackupsOptions, maxAgeMs: number | undefined): Promise<number> {
  if (!globals.company) throw new InvalidInputError([{ path: 'company', message: 'no company: set SITEFLEET_COMPANY or pass --company' }]);
  const runtime = await openRuntime(globals, globals.company);
  let rows: EnvironmentBackups[];
  try {
    const reader = inventoryReader(runtime.caller);
    const inventory = await readInventory(reader, globals.company);
    const selector = selectorFrom(opts);
    const envs = inventory.environments.filter((e) => matches(e, selector));
    const progress = new Progress(envs.length, globals.io.stderr, !globals.quiet && globals.io.stderr.isTTY === true, 'environments read');
    await readBackups(
      reader,
      inventory,
      envs.map((e) => e.id),
      () => progress.step(false),
    );
    progress.end();
    const now = Date.now();
    rows = envs.map((e) => summarizeBackups(e, inventory.backups?.[e.id] ?? [], now, maxAgeMs));
  } finally {
    await runtime.close();
  }
  globals.io.stdout.write(`${render(rows, opts.format)}\n`);
  const stale = rows.filter((r) => !r.fresh);
  if (maxAgeMs !== undefined && !globals.quiet && opts.format === 'table') {
    // The verdict belongs to the human table; JSON and CSV are for machines and carry `fresh` per row.
    globals.io.stdout.write(
      stale.length === 0
        ? `every one of ${rows.length} environments has a backup younger than ${opts.maxAge}\n`
        : `${stale.length} of ${rows.length} environments have no backup younger than ${opts.maxAge}: ${stale
            .slice(0, 10)
            .map((r) => terminalName(`${r.site}/${r.environment}`))
            .join(', ')}${stale.length > 10 ? ', …' : ''}\n`,
    );
  }
  return stale.length > 0 ? 1 : 0;
}

function render(rows: EnvironmentBackups[], format: BackupsOptions['format']): string {
  if (format === 'json') return jsonText(rows, 2);
  const flat = rows.flatMap((r) => {
    const types = Object.entries(r.newest);
    if (types.length === 0) return [[r.site, r.environment, r.env_id, '(none)', '', '', r.fresh ? 'yes' : 'NO']];
    return types.map(([type, b]) => [
      r.site,
      r.environment,
      r.env_id,
      type,
      b.created_at ?? '?',
      b.age_s === null ? '?' : formatDuration(b.age_s),
      r.fresh ? 'yes' : 'NO',
    ]);
  });
  const header = ['site', 'environment', 'env_id', 'type', 'newest', 'age', 'fresh'];
  if (format === 'csv') return [header, ...flat].map((row) => row.map(forCsv).join(',')).join('\n');
  return table(header, flat);
}
