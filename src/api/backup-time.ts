/**
 * When a backup was made, in ms since the epoch, or undefined when its `created_at` says no time.
 * The spec says milliseconds; answers of the real service have been seen in seconds, and a public
 * client reads an ISO date: each is read for the instant it means. Below 1e12 a number is seconds
 * (1e12 ms is September 2001, before any backup this tool reads; 1e12 s is 33 658 AD).
 */
export function backupCreatedMs(created: unknown): number | undefined {
  if (typeof created === 'number') {
    if (!Number.isFinite(created) || created <= 0) return undefined;
    return created < 1e12 ? created * 1000 : created;
  }
  if (typeof created === 'string' && /^\d{4}-\d{2}-\d{2}T/.test(created)) {
    const ms = Date.parse(created);
    return Number.isNaN(ms) ? undefined : ms;
  }
  return undefined;
}
