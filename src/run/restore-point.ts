import { restorePoint } from '../actions/index.js';
import { backupCreatedMs } from '../api/backup-time.js';
import type { Step } from '../plan/plan.js';
import type { CallPort } from './caller.js';
import type { RestorePoint, StepResult, StopKind } from './types.js';
import type { Logger } from 'pino';
import { AbortedError, SitefleetError } from '../errors.js';
import { decide, DEFAULT_RETRY } from './retry.js';

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

/** A restore point as read back, and the stop a refused read calls for (a 401: the key is bad for every call after it). */
export interface FoundRestorePoint {
  point: RestorePoint;
  stop?: { reason: string; kind: StopKind };
}

/**
 * The backup a succeeded restore-point step made, found by its tag in the environment's backup list
 * (one read, through the rate budget). A list that does not show it, or an answer that says nothing
 * of it (a 5xx, a lost connection, the run stopping), leaves the id null, with a log line saying why:
 * the tag still finds it in the dashboard. `earlier`: the backups with this tag the list showed before
 * the backup was asked for (backup-slots.ts makeRoom), left out. A 401 stops the run, as it does for any other call. An
 * error that is no answer of the service (a defect) is not one to hide: it is thrown.
 */
export async function findRestorePoint(caller: CallPort, step: Step, logger: Logger, earlier?: ReadonlySet<number>): Promise<FoundRestorePoint> {
  const tag = restorePoint.tagOf(step.body);
  const env = step.params.env_id!;
  try {
    const list = await caller.read('listBackups', { env_id: env });
    // A backup that carried this tag before this run asked for its own (an earlier run's) is never this run's restore point.
    const found = restorePoint.find(
      list.environment.backups.filter((b) => !earlier?.has(b.id)),
      tag,
    );
    if (!found) logger.warn({ env, tag }, 'the backup list does not show the restore point just made: it is known by its tag only');
    const takenMs = found && backupCreatedMs(found.created_at);
    return { point: { tag, backup_id: found?.id ?? null, ...(takenMs ? { taken_at: new Date(takenMs).toISOString() } : {}) } };
  } catch (error) {
    if (!(error instanceof SitefleetError)) throw error;
    const point = { tag, backup_id: null };
    const decision = decide(error, 1, true, DEFAULT_RETRY);
    if (decision.kind === 'stop') return { point, stop: { reason: decision.reason, kind: decision.stop } };
    logger[error instanceof AbortedError ? 'info' : 'warn'](
      { env, tag, err: error.message },
      'could not read the backup list: the restore point is known by its tag only',
    );
    return { point };
  }
}
