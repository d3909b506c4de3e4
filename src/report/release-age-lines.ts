import { nameOf } from '../inventory/kinds.js';
import type { ReleaseAgeDecision } from '../inventory/release-age.js';

/** Lines shown per task; the plan (`--out`) and the report hold every one. */
const SHOWN = 10;

/** One item update (a theme's, a plugin's) the release age decided about, once for every environment it applies to. */
export interface ReleaseAgeGroup {
  task: string;
  decision: ReleaseAgeDecision;
  environments: number;
}

/**
 * What the release age decided, folded: each item update once per task, with how many environments it
 * applies to, held ones first, then the most environments. A fleet's environments share their items'
 * versions, so one entry stands for many.
 */
export function releaseAgeGroups(items: readonly { task: string; release_age?: ReleaseAgeDecision[] }[]): ReleaseAgeGroup[] {
  const groups = new Map<string, ReleaseAgeGroup>();
  for (const item of items)
    for (const d of item.release_age ?? []) {
      const key = JSON.stringify([item.task, nameOf(d), d.code, d.installed, d.version, d.first_seen, d.eligible_at]);
      const group = groups.get(key) ?? { task: item.task, decision: d, environments: 0 };
      group.environments++;
      groups.set(key, group);
    }
  const tasks = [...new Set(items.map((i) => i.task))];
  return [...groups.values()].sort(
    (a, b) => tasks.indexOf(a.task) - tasks.indexOf(b.task) || Number(b.decision.held) - Number(a.decision.held) || b.environments - a.environments,
  );
}

/** The groups as lines, per task, with their codes, first-seen and eligible dates: what `plan` shows without -v. */
export function releaseAgeLines(items: readonly { task: string; release_age?: ReleaseAgeDecision[] }[]): string[] {
  const groups = releaseAgeGroups(items);
  const lines: string[] = [];
  for (const task of new Set(groups.map((g) => g.task))) {
    const mine = groups.filter((g) => g.task === task);
    for (const { decision: d, environments: n } of mine.slice(0, SHOWN))
      lines.push(
        `release age (${task}): ${nameOf(d)} ${d.installed} → ${d.version} first seen ${d.first_seen}, eligible ${d.eligible_at}: ${d.code}, ${d.held ? 'held' : 'sent'} on ${n} environment${n === 1 ? '' : 's'} (${d.override})`,
      );
    if (mine.length > SHOWN) lines.push(`release age (${task}): ${mine.length - SHOWN} more, in the plan (--out) or the report`);
  }
  return lines;
}
