import { restorePoint } from '../actions/index.js';
import type { Backup } from '../api/types.js';
import { backupCreatedMs } from '../api/backup-time.js';
import type { JournalState } from './journal.js';
import { restoreReadBack } from './life/restore.js';
import type { StepResult } from './types.js';
import type { Step, TaskSummary } from '../plan/plan.js';
import { lifeAt, roundAt, type LifeState } from './life/state.js';
import { healthyByItems } from './life/undo-items.js';

/** A failed write `sitefleet restore` may put back: its step, its result, and the backup id its run read. */
export interface RestoreCandidate {
  step: Step;
  result: StepResult;
  backupId: number;
  /** The tag of the backup the run took for this environment, from its (sealed) plan. */
  tag: string;
}

/** A write not restored, and why; `attention`: a site that may be broken and is left so (the exit code says it). */
export interface LeftAlone {
  step: Step;
  why: string;
  attention: boolean;
}

export interface RestoreChoice {
  todo: RestoreCandidate[];
  /** Restores accepted before (by the run, or a restore that was stopped) and not seen to finish: followed, not sent. */
  follow: RestoreCandidate[];
  /** Restores journaled as being sent and never answered: `unknown` now (journaled by the command), never sent again. */
  inQuestion: { step: Step; result: StepResult }[];
  left: LeftAlone[];
}

/**
 * Which of a run's failed writes the morning-after command restores, from the journal read back.
 * By default only a write that broke its site: sent, its check failed after it, healthy just before
 * it, with a restore point whose backup id the run read. A write refused or whose operation failed
 * changed nothing a restore would undo (and a restore loses what came since): it is restored only
 * when `only` names it. One restore per environment: the earliest restore point of the run there.
 * The tag comes from the sealed plan, never from the results.
 */
export function chooseRestores(state: JournalState, only?: readonly string[]): RestoreChoice {
  const plan = state.start.plan;
  const steps = new Map(plan.steps.map((s) => [s.id, s]));
  const choice: RestoreChoice = { todo: [], follow: [], inQuestion: [], left: [] };
  for (const id of only ?? []) {
    const step = steps.get(id);
    if (!step) choice.left.push({ step: unknownStep(id), why: 'no step of this run has that id', attention: false });
    else if (step.role === 'backup') choice.left.push({ step, why: 'a restore point, not a write: name the write it guards', attention: false });
  }
  const tasks = new Map(plan.tasks.map((t) => [t.index, t]));
  for (const step of plan.steps) {
    if (step.role === 'backup' || (only && !only.includes(step.id))) continue;
    const read = state.results.get(step.id);
    const resumes = read && lifeLeftToResume(tasks.get(step.task_index), step, read);
    if (resumes) {
      choice.left.push({ step, ...resumes });
      continue;
    }
    const result = read && restoreReadBack(read);
    const going = result?.restored?.status === 'accepted' && result.restored.operation_id !== null;
    const left = going ? undefined : refusal(step, result, only !== undefined);
    if (left === undefined && result) {
      const backup = steps.get(step.backup_step!)!;
      const candidate = { step, result, backupId: result.restored?.backup_id ?? result.restore_point!.backup_id!, tag: restorePoint.tagOf(backup.body) };
      (going ? choice.follow : choice.todo).push(candidate);
    } else if (left?.why) choice.left.push({ step, ...left });
    if (read && result && result !== read) choice.inQuestion.push({ step, result });
  }
  return onePerEnvironment(choice);
}

/**
 * A write whose life a halt cut short before its restore (life/state.ts): its operation not seen to
 * end, its site not looked at since, or isolation under way. Its life is `resume`'s to finish (it
 * looks, and restores a site the write or a round broke, from the restore point that life took);
 * a restore from the run's first restore point would undo what isolation kept. Only the `restoring`
 * state is this command's.
 */
function lifeLeftToResume(task: TaskSummary | undefined, step: Step, read: StepResult): Omit<LeftAlone, 'step'> | undefined {
  const at = task ? lifeAt(task, step, read) : 'ended';
  const why = RESUME_FINISHES[at];
  if (!why) return undefined;
  // Isolation not begun, or between rounds: the site was seen healthy last; a round cut short may have left it broken.
  const last = read.isolation?.rounds.at(-1);
  const attention = at !== 'isolating' || (last !== undefined && roundAt(last) !== 'ended');
  return { why: `${why}: \`sitefleet resume\` of this report finishes its life (it looks, and puts back a site left broken)`, attention };
}

/** What each state a halt can leave a life in says, when `restore` leaves that life to `resume`. */
const RESUME_FINISHES: Partial<Record<LifeState, string>> = {
  following: 'its operation was not seen to end',
  looking_after: 'nobody looked at its site after its write (held not_looked)',
  updating_database: 'its database step (wp core update-db) was not seen to end',
  isolating: 'isolation is under way, cut short by a halt',
  // A restore now would lose the site's data that putting its items back keeps.
  undoing: 'its items were being put back by their own files (health.undo: items_first) when a halt came',
};

/** Why a step is not restored (undefined: it is; `why: ''`: nothing to say, as it broke nothing and was not named). */
function refusal(step: Step, result: StepResult | undefined, named: boolean): Omit<LeftAlone, 'step'> | undefined {
  const quiet = { why: '', attention: false };
  if (!result || result.status !== 'failed') return named ? { why: `it did not fail (${result?.status ?? 'not sent'})`, attention: false } : quiet;
  // Put back by its items' own files and healthy again: a restore would only lose what the site did since its backup.
  if (healthyByItems(result)) return { why: "put back by its items' own files already, and healthy again (the site's data kept)", attention: false };
  if (result.restored && (result.restored.status === 'succeeded' || result.restored.status === 'unknown' || result.restored.status === 'sending'))
    return {
      why: `restore ${result.restored.status} already (backup ${result.restored.backup_id})${result.restored.reason ? `: ${result.restored.reason}` : ''}`,
      attention: result.restored.status !== 'succeeded' || result.restored.health?.outcome === 'unhealthy',
    };
  if (result.attempts === 0) return { why: 'its write was never sent', attention: false };
  if (result.health?.outcome === 'unhealthy before') return { why: 'its site was broken before the write', attention: false };
  const broke = result.health?.outcome === 'unhealthy';
  if (!broke && !named) return quiet; // refused, or its operation failed: nothing of it to undo unless a person says so
  if (broke && result.health!.before === undefined)
    return {
      why: 'its site was not checked before the write (a resumed run): it may have been broken already; name it with --steps to restore it',
      attention: true,
    };
  if (!step.backup_step || !result.restore_point) return { why: 'its task took no restore point (backup_first)', attention: broke };
  if (result.restore_point.backup_id === null)
    return { why: `the backup list never showed its restore point: restore the backup tagged ${result.restore_point.tag} by hand`, attention: true };
  return undefined;
}

/** Two writes of one environment (two tasks): only the earliest restore point goes, the site as it was before the run. */
function onePerEnvironment(choice: RestoreChoice): RestoreChoice {
  const first = new Map<string, RestoreCandidate>();
  for (const c of [...choice.follow, ...choice.todo].sort((a, b) => a.step.task_index - b.step.task_index)) {
    const env = c.step.target.env_id!;
    if (!first.has(env)) first.set(env, c);
  }
  const kept = new Set(first.values());
  const dropped = [...choice.todo, ...choice.follow].filter((c) => !kept.has(c));
  return {
    ...choice,
    todo: choice.todo.filter((c) => kept.has(c)),
    follow: choice.follow.filter((c) => kept.has(c)),
    left: [
      ...choice.left,
      ...dropped.map((c) => ({ step: c.step, why: 'its environment is restored from an earlier restore point of this run', attention: false })),
    ],
  };
}

function unknownStep(id: string): Step {
  return { id, task: '', task_index: -1, action: '', target: {}, endpoint: 'restoreBackup', method: 'POST', path: '', params: {}, idempotent: false };
}

/**
 * The backup the service lists under the candidate's id must be the one its run took: a manual
 * backup tagged as its restore point, made after the run started (a same-day run before it used the
 * same tag). A journal's results are not sealed; this keeps an edited id from restoring another
 * backup. Returns why not, or undefined.
 */
export function backupMismatch(candidate: RestoreCandidate, backups: readonly Backup[], runStartedAt: string): string | undefined {
  const backup = backups.find((b) => b.id === candidate.backupId);
  if (!backup) return `backup ${candidate.backupId} is no longer in the environment's backup list`;
  if ((backup.note !== candidate.tag && backup.name !== candidate.tag) || (backup.type !== undefined && backup.type !== 'manual'))
    return `backup ${candidate.backupId} is not this run's restore point (it is not a manual backup tagged ${candidate.tag})`;
  const created = backupCreatedMs(backup.created_at);
  // A minute's grace for clocks that disagree; a backup of an earlier run is hours or days older.
  if (created !== undefined && created < Date.parse(runStartedAt) - 60_000)
    return `backup ${candidate.backupId} is older than this run: it is not the restore point the run took`;
  return undefined;
}
