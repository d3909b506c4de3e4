import { nameOf } from '../inventory/kinds.js';
import type { Target } from '../actions/action.js';
import type { StagingDecision } from '../plan/staging-first.js';

/** Rows a page shows, and lines per task the plan shows; the report (and `plan --out`) hold every one. */
const PAGE_ROWS = 200;
const SHOWN = 10;

type Item = { task: string; target: Target; staging?: StagingDecision[] };

/** One site's decision for one item update: what the run page lists, site by site. */
export interface StagingRow {
  task: string;
  site: string;
  environment: string;
  decision: StagingDecision;
}

/**
 * Where each site's update stands under staging first, a row per site and item version: the staging
 * step says `staged`, the live environment's step `promoted`, and live's skip why it waits. Waiting
 * rows first (failed, soaking, no staging), then staged, then promoted.
 */
export function stagingRows(items: readonly Item[]): StagingRow[] {
  // A decision is told twice (a site staged tonight: its staging step, and live's skip that waits for
  // it): one row per site, the site known by id (its staging environment, else its live one), never by name.
  const seen = new Set<string>();
  const rows = items.flatMap((item) =>
    (item.staging ?? []).flatMap((decision) => {
      const key = JSON.stringify([item.task, decision.staging?.env_id ?? item.target.env_id ?? '', decision.code, nameOf(decision), decision.version]);
      if (seen.has(key)) return [];
      seen.add(key);
      return [{ task: item.task, site: item.target.site ?? '', environment: item.target.environment ?? '', decision }];
    }),
  );
  const order = ['staging_failed', 'no_staging', 'staging_soaking', 'staged', 'staging_bypassed', 'promoted'];
  return rows.sort((a, b) => order.indexOf(a.decision.code) - order.indexOf(b.decision.code) || (a.site < b.site ? -1 : a.site > b.site ? 1 : 0));
}

/** At most PAGE_ROWS rows, and how many more the report holds. */
export function pageRows(items: readonly Item[]): { rows: StagingRow[]; more: number } {
  const rows = stagingRows(items);
  return { rows: rows.slice(0, PAGE_ROWS), more: Math.max(0, rows.length - PAGE_ROWS) };
}

/** The decisions folded by task, code and item version (and the soak's end): how many sites each stands for. */
export function stagingGroups(items: readonly Item[]): { task: string; decision: StagingDecision; sites: number }[] {
  const groups = new Map<string, { task: string; decision: StagingDecision; sites: number }>();
  for (const row of stagingRows(items)) {
    const d = row.decision;
    const key = JSON.stringify([row.task, d.code, nameOf(d), d.version, d.until ?? null]);
    const group = groups.get(key) ?? { task: row.task, decision: d, sites: 0 };
    group.sites++;
    groups.set(key, group);
  }
  return [...groups.values()];
}

/** What `plan` says of staging first without -v: each group once per task, with its sites and override. */
export function stagingLines(items: readonly Item[]): string[] {
  const lines: string[] = [];
  const groups = stagingGroups(items);
  for (const task of new Set(groups.map((g) => g.task))) {
    const mine = groups.filter((g) => g.task === task);
    for (const { decision: d, sites } of mine.slice(0, SHOWN))
      lines.push(
        `staging first (${task}): ${d.code}: ${nameOf(d)} ${d.version} on ${sites} site${sites === 1 ? '' : 's'}${d.until ? `, live after ${d.until}` : ''}${d.override ? ` (${d.override})` : ''}`,
      );
    if (mine.length > SHOWN) lines.push(`staging first (${task}): ${mine.length - SHOWN} more, in the plan (--out) or the report`);
  }
  return lines;
}

/** Whether a decision holds live back (a wait to list), rather than tell what live took tonight. */
export function holdsLive(d: StagingDecision): boolean {
  return d.code !== 'promoted' && d.code !== 'staging_bypassed';
}

/**
 * What went to live without its staging soak (rollout.security_bypass), once per task and item
 * version, with its sites: a summary names every bypass. The lines hold the service's names as they
 * came: each sink makes them safe for itself.
 */
export function bypassLines(items: readonly Item[]): string[] {
  return stagingGroups(items)
    .filter(({ decision: d }) => d.code === 'staging_bypassed')
    .map(
      ({ task, decision: d, sites }) =>
        `staging bypassed (${task}): ${nameOf(d)} ${d.version} went to live unstaged on ${sites} site${sites === 1 ? '' : 's'}: ${d.why} (rollout.security_bypass)`,
    );
}
