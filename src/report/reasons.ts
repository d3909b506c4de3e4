import { ACTIONS } from '../actions/index.js';
import type { Report } from './report.js';

/** One reason the plan gave (or one thing a reason named, see `reasonParts`), with how many targets it was given for. */
export interface PlanReason {
  task: string;
  reason: string;
  count: number;
}

/**
 * Why the plan left work undone, in the action's words: the reasons of the targets it skipped and the
 * notes of the calls it made (items left alone beside the ones updated), each distinct reason once
 * with its count, most frequent first within a task. A fleet's environments share their items'
 * versions, so a policy's reasons repeat and fold.
 */
export function planReasons(report: Report): PlanReason[] {
  const byKey = new Map<string, PlanReason>();
  for (const r of report.results) {
    const given = r.step_id === null || ['accepted', 'succeeded', 'planned'].includes(r.status);
    if (!given || r.reason === null || r.role === 'backup') continue;
    const parts = ACTIONS.get(r.action)?.reasonParts?.(r.reason) ?? [r.reason];
    for (const reason of new Set(parts)) {
      const key = JSON.stringify([r.task, reason]);
      const found = byKey.get(key) ?? { task: r.task, reason, count: 0 };
      found.count++;
      byKey.set(key, found);
    }
  }
  const tasks = [...new Set(report.results.map((r) => r.task))];
  return [...byKey.values()].sort((a, b) => tasks.indexOf(a.task) - tasks.indexOf(b.task) || b.count - a.count || (a.reason < b.reason ? -1 : 1));
}
