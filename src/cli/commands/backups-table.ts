import type { GlobalOptions } from '../../app/runtime.js';
import { formatDuration } from '../../util/duration.js';
import { table } from '../render.js';
import { forCsv, jsonText, terminalName } from '../../util/safe-text.js';
import { selectorFrom, type SelectorFlags } from '../selector-flags.js';
import { readBackupAges, type EnvironmentBackups } from '../../app/backups-check.js';

export interface BackupsOptions extends SelectorFlags {
  maxAge?: string;
  format: 'table' | 'json' | 'csv';
}

/** `sitefleet backups`: the newest backup of each type per selected environment, then the verdict. Returns the exit code. */
export async function showBackups(globals: GlobalOptions, opts: BackupsOptions, maxAgeMs: number | undefined): Promise<number> {
  const rows = await readBackupAges(globals, selectorFrom(opts), maxAgeMs);
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
      // Each row says its own backup's freshness: a week-old system backup is not fresh because last night's manual one is.
      b.fresh ? 'yes' : 'NO',
    ]);
  });
  const header = ['site', 'environment', 'env_id', 'type', 'newest', 'age', 'fresh'];
  if (format === 'csv') return [header, ...flat].map((row) => row.map(forCsv).join(',')).join('\n');
  return table(header, flat);
}
