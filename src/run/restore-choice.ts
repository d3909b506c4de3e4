import { restorePoint } from '../actions/index.js';
import type { Backup } from '../api/types.js';
import type { JournalState } from './journal.js';
import { restoreReadBack } from './restore.js';
import type { StepResult } from './types.js';
import type { Step } from '../plan/plan.js';

/** A failed write `sitefleet restore` may put back: its step, its result, and the backup id its run read. */
export interface RestoreCandidate {
  step: Step;
  result: StepResult;
  backupId: number;
  /** The tag of the backup the run took for this environment, from its (sealed) plan. */
  tag: string;
}

export interface RestoreChoice {
  todo: RestoreCandidate[];
  /** Restores accepted before (by the run, or a restore that was stopped) and not seen to finish: followed, not sent. */
  follow: RestoreCandidate[];
  /** Failed writes (or those named) that are not restored, and why. */
  left: { step: Step; why: string }[];
}

/** Restore outcomes after which the command sends nothing more: done, going, or perhaps sent. */
const SETTLED = new Set(['sending', 'accepted', 'succeeded', 'unknown']);

/**
 * Which of a run's failed writes the morning-after command restores, from the journal read back: by
 * default every failed write that was sent, has a restore point whose backup id the run read, and
 * whose site was not broken before it; `only` narrows to those step ids (an id that names no failed
 * write is said, not guessed at). The tag comes from the sealed plan, never from the results.
 */
export function chooseRestores(state: JournalState, only?: readonly string[]): RestoreChoice {
  const plan = state.start.plan;
  const steps = new Map(plan.steps.map((s) => [s.id, s]));
  const choice: RestoreChoice = { todo: [], follow: [], left: [] };
  for (const id of only ?? []) if (!steps.has(id)) choice.left.push({ step: unknownStep(id), why: 'no step of this run has that id' });
  for (const step of plan.steps) {
    if (step.role === 'backup' || (only && !only.includes(step.id))) continue;
    const read = state.results.get(step.id);
    const result = read && restoreReadBack(read);
    const going = result?.restored?.status === 'accepted' && result.restored.operation_id !== null;
    const why = going ? undefined : refusal(step, result, only !== undefined);
    if (why === undefined && result) {
      const backup = steps.get(step.backup_step!)!;
      const candidate = { step, result, backupId: result.restored?.backup_id ?? result.restore_point!.backup_id!, tag: restorePoint.tagOf(backup.body) };
      (going ? choice.follow : choice.todo).push(candidate);
    } else if (why) choice.left.push({ step, why });
  }
  return choice;
}

/** Why a step is not restored (undefined: it is; '' : not a failure, nothing to say unless named). */
function refusal(step: Step, result: StepResult | undefined, named: boolean): string | undefined {
  const quiet = named ? undefined : '';
  if (!result || result.status !== 'failed') return named ? `it did not fail (${result?.status ?? 'not sent'})` : quiet;
  if (result.attempts === 0) return 'its write was never sent';
  if (!step.backup_step || !result.restore_point) return 'its task took no restore point (backup_first)';
  if (result.restore_point.backup_id === null)
    return `the backup list never showed its restore point: restore the backup tagged ${result.restore_point.tag} by hand`;
  if (result.health?.outcome === 'unhealthy before') return 'its site was broken before the write';
  if (result.health && result.health.before === undefined) return 'its site was not checked before the write (a resumed run): it may have been broken already';
  if (result.restored && SETTLED.has(result.restored.status))
    return `restore ${result.restored.status} already (backup ${result.restored.backup_id})${result.restored.reason ? `: ${result.restored.reason}` : ''}`;
  return undefined;
}

function unknownStep(id: string): Step {
  return { id, task: '', task_index: -1, action: '', target: {}, endpoint: 'restoreBackup', method: 'POST', path: '', params: {}, idempotent: false };
}

/**
 * The backup the service lists under the candidate's id must be the one its run took: tagged as its
 * restore point. A journal's results are not sealed; this is what keeps an edited id from restoring
 * an older backup. Returns why not, or undefined.
 */
export function backupMismatch(candidate: RestoreCandidate, backups: readonly Backup[]): string | undefined {
  const backup = backups.find((b) => b.id === candidate.backupId);
  if (!backup) return `backup ${candidate.backupId} is no longer in the environment's backup list`;
  if (backup.note !== candidate.tag && backup.name !== candidate.tag)
    return `backup ${candidate.backupId} is not this run's restore point (it is not tagged ${candidate.tag})`;
  return undefined;
}
