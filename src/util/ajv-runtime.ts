import { isIPv4, isIPv6 } from 'node:net';
import { createRequire } from 'node:module';
import { tooLong } from './duration.js';

/**
 * What the validators need at run time besides ajv's own runtime: the formats and the functions of
 * sitefleet's keywords. Both the validators compiled at build time (dist/generated/validators/, whose files are handed
 * this module as `sitefleet`) and those compiled at run time use these, so they cannot differ.
 */

/** An IPv4 address, an IPv4 address with a prefix (`/0`..`/32`), or an IPv6 address. */
export function isDeniedIp(value: string): boolean {
  const slash = value.indexOf('/');
  if (slash === -1) return isIPv4(value) || isIPv6(value);
  const prefix = value.slice(slash + 1);
  return isIPv4(value.slice(0, slash)) && /^(?:[0-9]|[12][0-9]|3[0-2])$/.test(prefix);
}

/** `maxDuration`: whether a duration is past its limit (see LONGEST in util/duration.ts). */
export function pastMaxDuration(data: string, max: string): boolean {
  return tooLong(data, max) !== undefined;
}

/** `maxAge`: whether an age (days allowed) is past its limit (see LONGEST_AGE in util/duration.ts). */
export function pastMaxAge(data: string, max: string): boolean {
  return tooLong(data, max, 'age') !== undefined;
}

type Format = ((value: string) => boolean) | RegExp | { validate: unknown; [key: string]: unknown };

// ajv-formats' table is CommonJS and loads nothing of ajv itself.
const { fullFormats } = createRequire(import.meta.url)('ajv-formats/dist/formats') as { fullFormats: Record<string, Format> };

/** Every format a schema of ours may name: ajv-formats' full set, and `denied-ip`. */
export const formats: Record<string, Format> = { ...fullFormats, 'denied-ip': { type: 'string', validate: isDeniedIp } };
