import type { Playbook, Task } from '../playbook/types.js';

/**
 * `rollout.together`: a task that updates another kind of item (plugins beside themes) joins an
 * earlier task's turn on each environment both write to. One backup before both (the earlier task's),
 * one look after both, one restore of both when the site broke: a site is taken down and looked at once
 * a night, and a restore never leaves half of a night's updates on it. Where only the joining task
 * writes, it keeps its own backup and look, under the same guards.
 */

/** What joining reads and sets of a step (plan.ts's Step, which imports this module). */
interface JoinedStep {
  id: string;
  task_index: number;
  target: { env_id?: string };
  role?: string;
  backup_step?: string;
  joins?: number;
  wave?: number;
}

/** The earlier task a task joins, if it names one (the playbook's checks made sure it exists and comes first). */
export function partnerOf(playbook: Pick<Playbook, 'tasks'>, task: Task): Task | undefined {
  const name = task.rollout?.together;
  return name === undefined ? undefined : playbook.tasks.find((t) => t.name === name);
}

/** The task as it is planned: with its partner's guards (`health`, `backup_first`), which it shares. */
export function withPartnerGuards(task: Task, partner: Task | undefined): Task {
  if (!partner) return task;
  const { health, backup_first } = partner;
  return { ...task, ...(health ? { health } : {}), ...(backup_first ? { backup_first } : {}) };
}

/**
 * Joins the joining task's steps (`own`, just planned) to the partner's on each environment the
 * partner writes to: a write there waits for the partner's backup instead of a backup of its own
 * (which is dropped), goes in the partner's wave, and says whose turn it is in (`joins`). Returns the
 * steps to keep.
 */
export function joinSteps<S extends JoinedStep>(own: S[], partner: Task, planned: readonly S[]): S[] {
  const theirs = planned.filter((s) => s.task_index === partner.index && s.target.env_id !== undefined);
  const writes = new Map(theirs.filter((s) => s.role !== 'backup').map((s) => [s.target.env_id!, s]));
  const backups = new Map(theirs.filter((s) => s.role === 'backup').map((s) => [s.target.env_id!, s.id]));
  const joined = new Set<string>();
  for (const step of own) {
    const env = step.target.env_id;
    const write = env === undefined || step.role === 'backup' ? undefined : writes.get(env);
    if (!write) continue;
    joined.add(env!);
    const backup = backups.get(env!);
    step.joins = partner.index;
    if (backup) step.backup_step = backup;
    else delete step.backup_step;
    if (write.wave !== undefined) step.wave = write.wave;
  }
  return own.filter((s) => !(s.role === 'backup' && joined.has(s.target.env_id!)));
}
