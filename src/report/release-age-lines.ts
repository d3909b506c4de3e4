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

/** `3 days`, `5 hours`, `20 minutes`, `moments`: a span as a person says it, to the unit that matters. */
function spanText(ms: number): string {
  const units: [number, string][] = [
    [86_400_000, 'day'],
    [3_600_000, 'hour'],
    [60_000, 'minute'],
  ];
  for (const [size, unit] of units) {
    const n = Math.round(ms / size);
    if (ms >= size * 0.95) return `${n} ${unit}${n === 1 ? '' : 's'}`;
  }
  return 'moments';
}

/** `first seen 2 days ago`, `eligible in 3 days`, `first seen just now`: a date as an age from `now`. */
export function ageText(word: string, iso: string, now: number): string {
  const ms = now - Date.parse(iso);
  if (Number.isNaN(ms)) return `${word} ${iso}`;
  if (Math.abs(ms) < 60_000) return `${word} just now`;
  return ms > 0 ? `${word} ${spanText(ms)} ago` : `${word} in ${spanText(-ms)}`;
}

/** One item version a task's release age decided about, whatever versions the environments run now. */
interface VersionGroup {
  decision: ReleaseAgeDecision;
  from: Set<string>;
  environments: number;
}

/** A task's groups folded once more: one per item, version and decision, with every installed version it moves from. */
function byVersion(groups: readonly ReleaseAgeGroup[]): VersionGroup[] {
  const folded = new Map<string, VersionGroup>();
  for (const { decision: d, environments } of groups) {
    const key = JSON.stringify([nameOf(d), d.version, d.code, d.held]);
    const group = folded.get(key) ?? { decision: d, from: new Set<string>(), environments: 0 };
    group.from.add(d.installed);
    group.environments += environments;
    // The soonest date stands for the group: the first install it frees.
    if (Date.parse(d.eligible_at) < Date.parse(group.decision.eligible_at)) group.decision = d;
    folded.set(key, group);
  }
  return [...folded.values()];
}

/**
 * The groups as lines, per task: each item version once, with the versions it moves from, how long ago
 * it was first seen and when it is eligible, as ages from `now` (`plan` shows these without -v; the
 * plan file and the report keep the dates). What lets a held one go sooner is said once per task.
 */
export function releaseAgeLines(items: readonly { task: string; release_age?: ReleaseAgeDecision[] }[], now = Date.now()): string[] {
  const groups = releaseAgeGroups(items);
  const lines: string[] = [];
  for (const task of new Set(groups.map((g) => g.task))) {
    const mine = byVersion(groups.filter((g) => g.task === task));
    for (const { decision: d, from, environments: n } of mine.slice(0, SHOWN))
      lines.push(
        `release age (${task}): ${nameOf(d)} ${[...from].sort((a, b) => a.localeCompare(b, 'en', { numeric: true })).join(', ')} → ${d.version}, ${ageText('first seen', d.first_seen, now)}, ${ageText('eligible', d.eligible_at, now)}: ${d.code}, ${d.held ? 'held' : 'sent'} on ${n} environment${n === 1 ? '' : 's'}`,
      );
    if (mine.length > SHOWN) lines.push(`release age (${task}): ${mine.length - SHOWN} more, in the plan (--out) or the report`);
    const overrides = [...new Set(mine.slice(0, SHOWN).map(({ decision: d }) => `${d.code}: ${d.override}`))];
    if (overrides.length > 0) lines.push(`release age (${task}): ${overrides.join('; ')}`);
  }
  return lines;
}
