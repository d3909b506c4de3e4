const UNITS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };

/** `500ms`, `30s`, `5m`, `1h30m`, `2d` → milliseconds; undefined when the text is not a duration. */
export function parseDuration(text: string): number | undefined {
  const parts = [...text.trim().matchAll(/(\d+(?:\.\d+)?)(ms|s|m|h|d)/g)];
  if (parts.length === 0 || parts.map((p) => p[0]).join('') !== text.trim()) return undefined;
  return Math.round(parts.reduce((sum, p) => sum + Number(p[1]) * UNITS[p[2]!]!, 0));
}

const DURATION_PATTERN = '^([0-9]+(\\.[0-9]+)?(ms|s|m|h))+$';

/**
 * The longest wait a Node timer holds (about 24.8 days): setTimeout and AbortSignal.timeout take
 * anything longer as 1 ms, so a timeout given too long would fire at once and a pause would not
 * pause. Every duration that ends in a timer is held to a limit at or below this.
 */
export const MAX_TIMER_MS = 2 ** 31 - 1;

/**
 * The longest each duration a person gives may be, and why. Playbook fields take no `d`, so their
 * limits are written in hours. One rule applies them all (`tooLong`): to the playbook through the
 * schema keyword `maxDuration`, to flags through `durationOption` (cli/parse.ts), to the lease of
 * the coordination URL.
 */
export const LONGEST = {
  /** health.timeout: one fetch of one page; a page that takes ten minutes to come is not healthy. */
  healthTimeout: '10m',
  /** health.interval: between attempts (10 at most); a site not back an hour after its update is broken. */
  healthInterval: '1h',
  /** health.visual.gap: between two screenshots of a page; a page whose own noise needs minutes to show is not worth the run's time. */
  visualGap: '1m',
  /**
   * settings.wait_timeout, a task's timeout, `status --wait`: one operation. A backup of a large
   * site takes hours; one that has not ended in a day will not, and the run holds its lock meanwhile.
   */
  operationWait: '24h',
  /**
   * rollout.pause: a canary soak of days is a real practice; past a week the run has held its lock
   * and its process for too long: run the later waves as a run of their own.
   */
  rolloutPause: '168h',
  /** settings.not_found_grace: an operation the service still does not know after an hour was lost. */
  notFoundGrace: '1h',
  /** --rate-limit-wait: a day of 429s means another client owns the budget; waiting on outlives any window. */
  rateLimitWait: '24h',
  /** --max-plan-age: a plan is a review of the fleet as it was; three weeks on, that fleet is gone. */
  planAge: '24d',
  /** ?lease= of --coordination: a run that died keeps every other run out for its lease. */
  lease: '10m',
} as const;

/** Ages compared with dates and never put in a timer: the only limits that may pass MAX_TIMER_MS. */
export const LONGEST_AGE = {
  /** --max-age of `backups`: a monthly backup needs more than 24 days; a yearly one is the sparsest policy. */
  backupAge: '366d',
  /** --expiry-warning of `doctor`: a month ahead is common; a year ahead is as far as a warning helps. */
  expiryWarning: '366d',
  /**
   * with.min_release_age, with.by_bump: the common waits are 3 to 14 days; a release nobody should
   * install for more than a quarter is one to leave out with `themes` globs, not to wait for.
   */
  releaseAge: '90d',
  /** with.max_hold: at least the longest age; a fleet half a year behind a theme is not being maintained. */
  maxHold: '180d',
  /** rollout.soak: a day or a week on staging is common; a month is as long as a fix should wait for live. */
  stagingSoak: '30d',
  /** settings.retry_backoff: the host waits up to 16 days, sitefleet's default 30; a write left a quarter untried is one to look at by hand. */
  retryBackoff: '90d',
} as const;

/**
 * The one rule for every duration given: why `text` is refused for a field that takes at most `max`.
 * Undefined when it is within the limit, or not a duration at all (the caller says what one looks
 * like: the schema's pattern, a flag's example).
 */
export function tooLong(text: string, max: string, kind: 'timer' | 'age' = 'timer'): string | undefined {
  const limit = parseDuration(max);
  if (limit === undefined || (kind === 'timer' && limit > MAX_TIMER_MS)) throw new Error(`${max} is not a limit a timer holds`);
  const ms = parseDuration(text);
  return ms !== undefined && ms > limit ? `${JSON.stringify(text)} is longer than ${max}, the most it takes` : undefined;
}

const AGE_PATTERN = '^([0-9]+(\\.[0-9]+)?(ms|s|m|h|d))+$';

/**
 * An age field of a schema (days allowed: `3d`), at most `max` from LONGEST_AGE (the ajv keyword
 * `maxAge`, see util/ajv.ts). Ages are compared with dates, never put in a timer.
 */
export function ageSchema(max: string, description: string): Record<string, unknown> {
  return { type: 'string', pattern: AGE_PATTERN, maxAge: max, description: `${description}; at most ${max}` };
}

/** A duration field of a schema, at most `max` (the ajv keyword `maxDuration`, see util/ajv.ts). */
export function durationSchema(max: string, description: string): Record<string, unknown> {
  return { type: 'string', pattern: DURATION_PATTERN, maxDuration: max, description: `${description}; at most ${max}` };
}

/** Seconds as a person reads them on a line: 42s, 3m05s, 2h10m. */
export function formatDuration(seconds: number): string {
  const s = Math.round(seconds);
  if (s < 60) return `${s}s`;
  if (s < 3600) return `${Math.floor(s / 60)}m${String(s % 60).padStart(2, '0')}s`;
  return `${Math.floor(s / 3600)}h${String(Math.floor((s % 3600) / 60)).padStart(2, '0')}m`;
}
