import { itemOf, nameOf } from '../inventory/kinds.js';
import { unreadableWords, type WithheldDecision } from '../inventory/withheld.js';
import { clip } from '../util/safe-text.js';

/** Lines shown per task; the plan (`--out`) and the report hold every one. */
const SHOWN = 10;

type Item = { task: string; withheld?: WithheldDecision[] };

/** One update the company's history withheld, once for every environment it applies to. */
export interface WithheldGroup {
  task: string;
  decision: WithheldDecision;
  environments: number;
}

/**
 * What the company's history withheld, folded: a quarantined version once per task whatever the
 * environments (they share the version), a retry once per date; quarantines first, then the most environments.
 */
export function withheldGroups(items: readonly Item[]): WithheldGroup[] {
  const groups = new Map<string, WithheldGroup>();
  for (const item of items)
    for (const d of item.withheld ?? []) {
      const key = JSON.stringify([item.task, d.code, itemOf(d)?.kind, nameOf(d), d.version, groupedBy(d)]);
      const group = groups.get(key) ?? { task: item.task, decision: d, environments: 0 };
      group.environments++;
      groups.set(key, group);
    }
  const tasks = [...new Set(items.map((i) => i.task))];
  const rank = (g: WithheldGroup) => ['unreadable_record', 'quarantined', 'retry_later'].indexOf(g.decision.code);
  return [...groups.values()].sort((a, b) => tasks.indexOf(a.task) - tasks.indexOf(b.task) || rank(a) - rank(b) || b.environments - a.environments);
}

/** What sets one group of a decision apart from another of the same version: its date, or the line that holds it. */
function groupedBy(d: WithheldDecision): string {
  return d.code === 'retry_later' ? d.retry_at : d.code === 'quarantined' ? d.since : d.where;
}

/** When and where, in a few words: where it broke and when, its failures and date, or the store's line that holds it. */
export function withheldWhen(d: WithheldDecision): string {
  if (d.code === 'quarantined') return `broke ${d.site ?? d.env_id}${d.environment ? `/${d.environment}` : ''} at ${d.since}`;
  if (d.code === 'retry_later') return `failed ${d.failures}× (last ${d.last_failed_at}); not before ${d.retry_at}`;
  return `a line of the company's ${d.store === 'quarantine' ? 'quarantine' : 'retries'} that cannot be read: ${d.where}`;
}

/** The most of the service's words (a logged line, a check) a line shows: the report and the plan hold all of it. */
const WHY_WIDTH = 120;

/** A group in words: the code, the item version, when and where it broke (or failed, and its date), on how many environments. */
export function withheldText({ decision: d, environments: n }: Pick<WithheldGroup, 'decision' | 'environments'>): string {
  const item = `${itemOf(d)?.kind ?? ''} ${nameOf(d)} ${d.version}`;
  const on = `left alone on ${n} environment${n === 1 ? '' : 's'}`;
  if (d.code === 'quarantined') {
    const where = `${d.site ?? d.env_id}${d.environment ? `/${d.environment}` : ''}`;
    return `${item} ${on}: it broke ${where} at ${d.since}${d.broken_environments > 1 ? ` (${d.broken_environments} environments in all)` : ''}: ${clip(d.why, WHY_WIDTH)}`;
  }
  if (d.code === 'unreadable_record') return `${item} ${on}: ${clip(unreadableWords(d), 2 * WHY_WIDTH)}`;
  return `${item} ${on}: not before ${d.retry_at}, it failed ${d.failures === 1 ? 'once' : `${d.failures} times in a row`} (last ${d.last_failed_at}: ${clip(d.why, WHY_WIDTH)})`;
}

/** The groups as lines, per task, with their codes and overrides: what `plan` shows without -v (the caller makes them safe for its sink). */
export function withheldLines(items: readonly Item[]): string[] {
  const groups = withheldGroups(items);
  const lines: string[] = [];
  for (const task of new Set(groups.map((g) => g.task))) {
    const mine = groups.filter((g) => g.task === task);
    for (const g of mine.slice(0, SHOWN)) lines.push(`${g.decision.code} (${task}), ${g.decision.override}: ${withheldText(g)}`);
    if (mine.length > SHOWN) lines.push(`withheld (${task}): ${mine.length - SHOWN} more, in the plan (--out) or the report`);
  }
  return lines;
}
