import type { ReleaseAgeDecision } from '../inventory/release-age.js';

/** Lines shown per task; the plan (`--out`) and the report hold every one. */
const SHOWN = 10;

/**
 * What the release age decided, per task: each theme update once, with its reason code, first-seen and
 * eligible dates and how many environments it applies to, held ones first. A fleet's environments share
 * their themes' versions, so one line stands for many. `plan` shows these without -v.
 */
export function releaseAgeLines(items: readonly { task: string; release_age?: ReleaseAgeDecision[] }[]): string[] {
  const groups = new Map<string, { task: string; d: ReleaseAgeDecision; count: number }>();
  for (const item of items)
    for (const d of item.release_age ?? []) {
      const key = JSON.stringify([item.task, d.theme, d.code, d.installed, d.version, d.first_seen, d.eligible_at]);
      const group = groups.get(key) ?? { task: item.task, d, count: 0 };
      group.count++;
      groups.set(key, group);
    }
  const lines: string[] = [];
  for (const task of new Set([...groups.values()].map((g) => g.task))) {
    const mine = [...groups.values()].filter((g) => g.task === task).sort((a, b) => Number(b.d.held) - Number(a.d.held) || b.count - a.count);
    for (const { d, count } of mine.slice(0, SHOWN))
      lines.push(
        `release age (${task}): ${d.theme} ${d.installed} → ${d.version} first seen ${d.first_seen}, eligible ${d.eligible_at}: ${d.code}, ${d.held ? 'held' : 'sent'} on ${count} environment${count === 1 ? '' : 's'} (${d.override})`,
      );
    if (mine.length > SHOWN) lines.push(`release age (${task}): ${mine.length - SHOWN} more, in the plan (--out) or the report`);
  }
  return lines;
}
