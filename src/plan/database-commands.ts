import { AFTER_UPDATE, CORE_DATABASE } from '../actions/after-update.js';
import { ITEM_WRITES } from '../actions/item-writes.js';
import type { Step, TaskSummary } from './plan.js';

/**
 * The commands a write's success calls for (the life's database step, run/life/database-step.ts; the
 * estimate counts them): WordPress's database step for a core write, the items' own for the slugs
 * the task names (`after_update`) that the write updates. Read from the plan alone, so the plan and
 * the run agree.
 */
export function databaseCommands(task: Pick<TaskSummary, 'action' | 'after_update'>, step: Pick<Step, 'role' | 'body'>): string[] {
  if (step.role !== undefined) return []; // a restore point or a staging run of another step: not a write of the task's items
  if (task.action === 'core.update') return [CORE_DATABASE];
  if (task.action !== 'plugins.update' || !task.after_update) return [];
  const writes = ITEM_WRITES.plugin;
  const written = new Set([writes.pinnedOf(step.body)?.name, ...writes.bulkNames(step.body)]);
  return task.after_update.filter((slug) => written.has(slug)).flatMap((slug) => AFTER_UPDATE[slug] ?? []);
}
