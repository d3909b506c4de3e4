/**
 * When a backup was made, in ms since the epoch, or undefined when its `created_at` says no time.
 * The spec says milliseconds; restore has always read seconds too, so that a service answering in
 * seconds does not date every backup to January 1970. Below 1e12 a number is seconds (1e12 ms is
 * September 2001, before any backup this tool reads; 1e12 s is tens of thousands of years away).
 */
export function backupCreatedMs(created: unknown): number | undefined {
  if (typeof created !== 'number' || !Number.isFinite(created) || created <= 0) return undefined;
  return created < 1e12 ? created * 1000 : created;
}
