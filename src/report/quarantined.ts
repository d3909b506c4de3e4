import { itemOf, refOf, type Kind } from '../inventory/kinds.js';
import type { QuarantineBreak } from '../inventory/quarantine-table.js';
import { quarantineOverride } from '../inventory/withheld.js';
import { versionKey } from '../util/item-version.js';

/**
 * The versions a run found to break a site (isolation's culprits; a pinned write that broke its site
 * and was put back), as its report tells them: each environment and version once, dated when the
 * run's journal first showed it. From then on the company's quarantine holds it for every later run
 * until released. The same record the run writes into the quarantine, and what `status` records
 * again from the report (dated as it was, so a release made since stays: inventory/quarantine-table.ts).
 */
export interface QuarantinedEntry {
  kind: Kind;
  name: string;
  version: string;
  /** The fatal error the site's log named, or the check that failed (the service's text, never authority). */
  why: string;
  /** When it broke the site (ISO 8601). */
  at: string;
  env_id: string;
  site?: string;
  environment?: string;
}

export function quarantinedEntries(breaks: readonly QuarantineBreak[]): QuarantinedEntry[] {
  return breaks.map((b) => {
    const { kind, name } = itemOf(b)!;
    return {
      kind,
      name,
      version: b.version,
      why: b.why,
      at: new Date(b.at).toISOString(),
      env_id: b.env_id,
      ...(b.site !== undefined ? { site: b.site } : {}),
      ...(b.environment !== undefined ? { environment: b.environment } : {}),
    };
  });
}

/** The report's entries as the breaks the quarantine store records, with their own times. */
export function breaksOfEntries(entries: readonly QuarantinedEntry[]): QuarantineBreak[] {
  return entries.map((e) => ({
    ...refOf(e.kind, e.name),
    version: e.version,
    env_id: e.env_id,
    ...(e.site !== undefined ? { site: e.site } : {}),
    ...(e.environment !== undefined ? { environment: e.environment } : {}),
    at: Date.parse(e.at),
    why: e.why,
  }));
}

/** One version the run quarantined, with the environments it broke: what the run's page, Slack and the summaries list. */
export interface QuarantinedVersion {
  kind: Kind;
  name: string;
  version: string;
  /** Its first break in the run. */
  first: QuarantinedEntry;
  environments: number;
  /** What sends it again. */
  override: string;
}

/** The report's entries folded by version (`6.0` is `6.0.0`), in the order they first broke. */
export function quarantinedVersions(entries: readonly QuarantinedEntry[] | undefined): QuarantinedVersion[] {
  const byVersion = new Map<string, QuarantinedVersion>();
  for (const e of [...(entries ?? [])].sort((a, b) => (a.at < b.at ? -1 : a.at > b.at ? 1 : 0))) {
    const key = JSON.stringify([e.kind, e.name, versionKey(e.version)]);
    const known = byVersion.get(key);
    if (known) known.environments++;
    else
      byVersion.set(key, {
        kind: e.kind,
        name: e.name,
        version: e.version,
        first: e,
        environments: 1,
        override: quarantineOverride(e.kind, e.name, e.version),
      });
  }
  return [...byVersion.values()];
}

/** A version in words: `plugin forms 2.0.0 broke shop/live at …: PHP Fatal error …` (the service's text: the sink makes it safe). */
export function quarantinedText(q: QuarantinedVersion): string {
  const { first } = q;
  const where = `${first.site ?? first.env_id}${first.environment ? `/${first.environment}` : ''}`;
  const more = q.environments > 1 ? ` (${q.environments} environments in all)` : '';
  return `${q.kind} ${q.name} ${q.version} broke ${where}${more} at ${first.at}: ${first.why}`;
}
