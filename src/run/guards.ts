import { restorePoint } from '../actions/index.js';
import type { BackupListResponse } from '../api/types.js';
import type { Step } from '../plan/plan.js';
import type { CallPort } from './caller.js';
import type { RestorePoint, StepResult } from './types.js';

/**
 * What a `backup_first` write may do, given its backup step's result: go ahead with that restore
 * point, or not be sent at all. Only a backup the service finished is one to restore from.
 */
export function afterBackup(backup: StepResult | undefined, tag: string): { restore: RestorePoint } | { skip: string } {
  // Succeeded with no id read (a resume after a crash between the two): the tag still finds it.
  if (backup?.status === 'succeeded') return { restore: backup.restore_point ?? { tag, backup_id: null } };
  if (!backup || backup.status === 'skipped') return { skip: `backup failed: the backup was never sent (${backup?.reason ?? 'run stopped'})` };
  if (backup.status === 'accepted')
    return { skip: `backup failed: its operation ${backup.operation_id ?? ''} was not seen to finish (${backup.reason ?? 'still running'})` };
  return { skip: `backup failed: ${backup.reason ?? backup.error ?? backup.status}` };
}

/**
 * The backup a succeeded restore-point step made, found by its tag in the environment's backup list
 * (one read, through the rate budget). The list not showing it, or not answering, leaves the id
 * null: the tag still finds it in the dashboard.
 */
export async function findRestorePoint(caller: CallPort, step: Step): Promise<RestorePoint> {
  const tag = restorePoint.tagOf(step.body);
  try {
    const list = await caller.read<Partial<BackupListResponse>>('listBackups', { env_id: step.params.env_id! });
    const found = restorePoint.find(list.environment?.backups ?? [], tag);
    return { tag, backup_id: found?.id ?? null };
  } catch {
    return { tag, backup_id: null };
  }
}
