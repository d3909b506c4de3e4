import { parseDuration } from '../util/duration.js';
import type { Environment, InstalledItem } from './inventory.js';
import { refOf, type ItemRef, type Kind } from './kinds.js';
import type { QuarantineTable } from './quarantine-table.js';
import type { RetryTable } from './retry-table.js';
import { unreadOverride, type UnreadLine } from './unread-line.js';

/**
 * Updates the company's own history leaves alone (issue 48): a version that broke a site is
 * `quarantined` everywhere until a person releases it, and a write that failed for a reason that may
 * pass waits its backoff on its environment (`retry_later`). A line of either store that cannot be
 * read holds what it names (`unreadable_record`: a check that cannot look never passes). Pure: the
 * tables and the time are inputs the command reads from the stores (app/prepare.ts), as the release
 * age's first-seen table is.
 */

export const WITHHELD_CODES = ['quarantined', 'retry_later', 'unreadable_record'] as const;
export type WithheldCode = (typeof WITHHELD_CODES)[number];

/** `settings.retry_backoff` when the playbook gives none: the host's own retries, then a month, repeating. */
export const DEFAULT_RETRY_BACKOFF = ['1d', '2d', '4d', '8d', '16d', '30d'] as const;

/** What the stores hold and the time to judge at: what the planner withholds updates by. */
export interface Withholding {
  now: number;
  quarantine: QuarantineTable;
  retries: RetryTable;
  /** The waits after the 1st, 2nd… failure, in ms; the last repeats. */
  backoff: readonly number[];
}

/** One update left alone, with when, where and why, and the command that lets it go. */
export type WithheldDecision = ItemRef & (Quarantined | RetryLater | UnreadableRecord);

interface Common {
  installed: string;
  /** The version the listing offers (the one held). */
  version: string;
  /** What a person runs to let it go. */
  override: string;
}

interface Quarantined extends Common {
  code: 'quarantined';
  /** When it first broke a site since it was last released. */
  since: string;
  /** Where: the environment it first broke, and the names the listing gave it. */
  env_id: string;
  site?: string;
  environment?: string;
  /** How many environments it broke. */
  broken_environments: number;
  /** The logged error line or the failed check (the service's text: shown only through safe-text). */
  why: string;
}

interface RetryLater extends Common {
  code: 'retry_later';
  /** When it may be sent again. */
  retry_at: string;
  /** Failed runs in a row on this environment. */
  failures: number;
  last_failed_at: string;
  why: string;
}

/** A line of the company's quarantine or retries that cannot be read names this update (inventory/unread-line.ts). */
interface UnreadableRecord extends Common {
  code: 'unreadable_record';
  /** Which store: a quarantine line holds every environment, a retry line the one it names (or every one). */
  store: 'quarantine' | 'retry';
  /** The line: its file and line number, or its Redis hash and field. */
  where: string;
  /** Why it could not be read. */
  why: string;
}

const iso = (at: number) => new Date(at).toISOString();

/** Why the company's history leaves this update alone on this environment; undefined when it may go. */
export function judgeWithheld(env: Pick<Environment, 'id'>, t: InstalledItem, w: Withholding | undefined): WithheldDecision | undefined {
  if (!w) return undefined;
  const base = { ...refOf(t.kind, t.name), installed: t.version, version: t.update_version };
  const held = w.quarantine.get(t.kind, t.name, t.update_version);
  if (held) {
    const { first } = held;
    return {
      ...base,
      code: 'quarantined',
      since: iso(first.at),
      env_id: first.env_id,
      ...(first.site ? { site: first.site } : {}),
      ...(first.environment ? { environment: first.environment } : {}),
      broken_environments: held.env_ids.length,
      why: first.why,
      override: quarantineOverride(t.kind, t.name, t.update_version),
    };
  }
  const unread = w.quarantine.unreadFor(t.kind, t.name, t.update_version);
  if (unread) return unreadable(base, 'quarantine', unread);
  const retry = w.retries.state(env.id, t.kind, t.name, t.update_version, w.backoff);
  if (!retry || retry.retry_at <= w.now) {
    const line = w.retries.unreadFor(env.id, t.kind, t.name, t.update_version);
    return line ? unreadable(base, 'retry', line) : undefined;
  }
  const last = retry.failures.at(-1)!;
  return {
    ...base,
    code: 'retry_later',
    retry_at: iso(retry.retry_at),
    failures: retry.failures.length,
    last_failed_at: iso(last.at),
    why: last.why,
    override: retryOverride(t.kind, t.name, t.update_version),
  };
}

function unreadable(base: ItemRef & { installed: string; version: string }, store: UnreadableRecord['store'], line: UnreadLine): WithheldDecision {
  return { ...base, code: 'unreadable_record', store, where: line.where, why: line.why, override: unreadOverride(line) };
}

export const quarantineOverride = (kind: Kind, name: string, version: string) => `sitefleet quarantine release ${name}@${version} --kind ${kind}`;
export const retryOverride = (kind: Kind, name: string, version: string) => `sitefleet retry clear ${name}@${version} --kind ${kind}`;

/** The playbook's backoff (`settings.retry_backoff`, checked by its schema) in ms, or the default. */
export function backoffOf(given: readonly string[] | undefined): number[] {
  return (given ?? DEFAULT_RETRY_BACKOFF).map((text) => parseDuration(text) ?? 0);
}

/**
 * The decision in words, as a note or skip says it (the structured decision says the same as data).
 * No `; `: a note's items are split at it (items-update.ts), so the service's words lose theirs.
 */
export function withheldWords(d: WithheldDecision): string {
  const why = d.why.replace(/;\s/g, ', ');
  if (d.code === 'quarantined')
    return `${d.version} quarantined: it broke ${d.broken_environments === 1 ? 'a site' : `${d.broken_environments} sites`} (first ${d.site ?? d.env_id} at ${d.since}: ${why}), until \`${d.override}\``;
  if (d.code === 'unreadable_record') return `${d.version} held: ${unreadableWords(d)}, until \`${d.override}\``;
  return `update ${d.installed} → ${d.version} failed ${d.failures === 1 ? 'once' : `${d.failures} times in a row`} here (last ${d.last_failed_at}: ${why}): retry_later, not before ${d.retry_at} or \`${d.override}\``;
}

/** Why an unreadable line holds an update, in words (a note, a plan's line, Slack). */
export function unreadableWords(d: Pick<UnreadableRecord, 'store' | 'where' | 'why'>): string {
  const store = d.store === 'quarantine' ? "the company's quarantine" : "the company's retries";
  return `${store} has a line that cannot be read and may name it (${d.where}: ${d.why.replace(/;\s/g, ', ')})`;
}
