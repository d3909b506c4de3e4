import type { ApiKey } from '../api/types.js';

export interface KeyFindings {
  /** Active keys that expire within the warning period, soonest first. */
  expiring: { name: string; expires_at: string; days: number }[];
  /** Keys that are not active: listed, not judged (the token in use is judged by the service's answers). */
  inactive: { name: string; status: string }[];
}

/** What an operator should hear about the company's API keys, as of `now`. */
export function keyFindings(keys: ApiKey[], now: number, warnWithinMs: number): KeyFindings {
  const expiring = keys
    .filter((k) => k.status === 'active' && k.expires_at !== null)
    .map((k) => ({ name: k.name ?? k.id, expires_at: k.expires_at!, left: Date.parse(k.expires_at!) - now }))
    .filter((k) => Number.isFinite(k.left) && k.left <= warnWithinMs)
    .sort((a, b) => a.left - b.left)
    .map((k) => ({ name: k.name, expires_at: k.expires_at, days: Math.max(0, Math.floor(k.left / 86_400_000)) }));
  // A key with no name is named by its id.
  const inactive = keys.filter((k) => k.status !== 'active').map((k) => ({ name: k.name ?? k.id, status: k.status }));
  return { expiring, inactive };
}

export function describeExpiring(findings: KeyFindings): string {
  return findings.expiring
    .map((k) => `"${k.name}" expires ${k.days === 0 ? 'within a day' : `in ${k.days} day${k.days === 1 ? '' : 's'}`} (${k.expires_at})`)
    .join(', ');
}
