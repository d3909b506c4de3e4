import { ACTIONS } from '../actions/index.js';
import type { Step, TaskSummary } from './plan.js';

/**
 * The commands a write's success calls for (the life's database step, run/life/database-step.ts; the
 * estimate counts them), as the task's action says (its `followUp`): WordPress's database step after
 * a core write, an item's own for the slugs the task names (`after_update`) that the write updates.
 * Read from the plan alone, so the plan and the run agree.
 */
export function databaseCommands(task: Pick<TaskSummary, 'action' | 'after_update'>, step: Pick<Step, 'role' | 'body'>): string[] {
  if (step.role === 'backup') return []; // a restore point: no item of the task's moved (a staging run did move its environment's)
  return ACTIONS.get(task.action)?.followUp?.(step.body, task.after_update) ?? [];
}
