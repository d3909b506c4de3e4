import { zeroCounts, type StepStatus } from '../run/types.js';
import type { ReportResult } from './report.js';

/**
 * The row (or test suite) a result is counted in: a task's restore points, and its staging environments'
 * runs of an update (rollout.staging_first), apart from its writes, so that the task's own row counts its
 * targets once, as the plan's `targets` does: a staged site's live environment is one row (its skip, or
 * its promotion), its staging step one row of `<task>: staging first`.
 */
export function groupOf(r: Pick<ReportResult, 'role' | 'task'>): string {
  return r.role === 'backup' ? `${r.task}: backups first` : r.role === 'staging' ? `${r.task}: staging first` : r.task;
}

export interface TaskCounts {
  /** The task's name, or `<task>: backups first` / `<task>: staging first` for its restore points and staging runs (groupOf). */
  task: string;
  action: string;
  counts: Record<StepStatus, number>;
}

/**
 * Counts by status of each task, in the report's order, its restore points apart: the one count the
 * terminal, JUnit, Markdown, the run page and the webhooks show per task.
 */
export function taskCounts(results: readonly ReportResult[]): TaskCounts[] {
  const tasks = new Map<string, TaskCounts>();
  for (const r of results) {
    const task = groupOf(r);
    let entry = tasks.get(task);
    if (!entry) {
      entry = { task, action: r.action, counts: zeroCounts() };
      tasks.set(task, entry);
    }
    entry.counts[r.status]++;
  }
  return [...tasks.values()];
}
