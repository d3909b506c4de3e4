import type { ReportResult } from './report.js';

/**
 * What the writes' database steps came to, per task and command, in words every sink can show:
 * `wp core update-db: 7 succeeded` or `wp core update-db: 5 succeeded, 2 failed (held database_not_updated)`;
 * after a restore, said apart. Commands come from sitefleet's own table (actions/after-update.ts), never from the service.
 */
export function databaseLines(results: readonly Pick<ReportResult, 'task' | 'database'>[]): { task: string; text: string }[] {
  const counts = new Map<string, Map<string, number>>();
  for (const r of results)
    for (const d of r.database ?? []) {
      const key = JSON.stringify([r.task, d.command, d.after]);
      const byStatus = counts.get(key) ?? new Map<string, number>();
      byStatus.set(d.status, (byStatus.get(d.status) ?? 0) + 1);
      counts.set(key, byStatus);
    }
  return [...counts].map(([key, byStatus]) => {
    const [task, command, after] = JSON.parse(key) as [string, string, string];
    const parts = [...byStatus].map(([status, n]) => `${n} ${status}`).join(', ');
    const left = [...byStatus.keys()].some((s) => s !== 'succeeded') && after === 'update' ? ' (held database_not_updated)' : '';
    return { task, text: `${command}${after === 'restore' ? ' after a restore' : ''}: ${parts}${left}` };
  });
}
