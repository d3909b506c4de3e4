import { readFileSync } from 'node:fs';

let version: string | undefined;

/** sitefleet's own version, from its package.json (read once, when first asked). */
export function sitefleetVersion(): string {
  version ??= (JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string }).version;
  return version;
}

/** How sitefleet names itself to the sites it checks, so their owners and firewalls can tell. */
export function siteUserAgent(): string {
  return `sitefleet/${sitefleetVersion()} (health check)`;
}
