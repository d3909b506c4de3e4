import { restoreFrom, type RestoreSettings } from '../../actions/index.js';
import { reasonText, writeAnswer } from '../../api/answer.js';
import type { CallResult } from '../../api/client.js';
import type { Step } from '../../plan/plan.js';
import type { CallPort, Outcome } from '../caller.js';
import type { HealthGate } from '../health-gate.js';
import { PRIORITY } from '../rate-budget.js';
import type { HealthVerdict } from '../../health/http/probe.js';
import { isHeldBefore, UNDONE, type CacheClear, type Restored, type StepResult } from '../types.js';
import type { Watcher, WatchOptions } from '../watcher.js';

/** What putting a broken site back needs from the run. */
export interface RestoreContext {
  caller: CallPort;
  watcher: Watcher;
  /** Journals a later word on the write (before the restore leaves, and at each turn after). */
  update(step: Step, result: StepResult): Promise<void>;
  /**
   * The run's halt (a second Ctrl-C, finish_within, a 401): a restore not yet sent is not sent. A
   * stop (budget, window, first Ctrl-C) does not keep one from going: it is a repair.
   */
  interrupt?: AbortSignal;
  settings?: RestoreSettings;
  watch: WatchOptions;
  /**
   * `health.clear_cache`: clears the environment's page cache before the check after the restore: a
   * cache may still hold the page the broken write served, and visitors would go on getting it.
   * @default the check reads whatever is served
   */
  clearCache?(step: Step): Promise<CacheClear>;
}

/**
 * `health.on_broken: restore`: a write whose site was healthy before it and broken after its
 * operation is put back from the restore point this run took for that environment, and checked
 * again. The step stays failed (the change broke the site) and carries `restored`. Only the backup
 * id this run read for its own restore point is ever sent; none, and nothing is sent.
 */
export async function restoreBroken(
  ctx: RestoreContext,
  step: Step,
  failed: StepResult,
  gate: HealthGate | undefined,
  url: string | undefined,
): Promise<StepResult> {
  const backupId = failed.restore_point?.backup_id ?? null;
  const save = (restored: Restored) => saved(ctx, step, failed, restored);
  if (backupId === null)
    return save({ backup_id: null, operation_id: null, status: 'not sent', reason: 'the backup list did not show the restore point: restore it by its tag' });
  if (ctx.interrupt?.aborted) return save({ backup_id: backupId, operation_id: null, status: 'not sent', reason: 'the run was interrupted first' });
  // Journaled before it leaves: a run that dies now reads it back as `unknown`, never to send it again.
  await save({ backup_id: backupId, operation_id: null, status: 'sending' });
  const request = restoreFrom.request(step.target, backupId, ctx.settings);
  const outcome = await ctx.caller.withPlace(PRIORITY.urgent, 'restoreBackup', (place) =>
    ctx.caller.call('restoreBackup', request.params, request.body, false, { place, priority: PRIORITY.urgent, stopSignal: ctx.interrupt }),
  );
  const answer = answerOf(outcome);
  const answered = await save({ backup_id: backupId, ...answer });
  if (answered.restored!.status === 'accepted') return followRestore(ctx, step, answered, gate, url);
  // Taken without an operation to follow: only the site itself, answering healthy, says it was restored.
  if (answer.reason === NO_OPERATION) return checkRestored(ctx, step, answered, gate, url);
  return answered;
}

/** A 2xx with no operation id: the vendor document's restore is asynchronous, so this alone proves nothing. */
const NO_OPERATION = 'the service took the restore without an operation to follow';

/** A restore whose operation was accepted: followed to its end (also after a resume), then the site is checked again. */
export async function followRestore(
  ctx: RestoreContext,
  step: Step,
  result: StepResult,
  gate: HealthGate | undefined,
  url: string | undefined,
): Promise<StepResult> {
  const restored = result.restored!;
  const watch = ctx.watcher.watch(restored.operation_id!, 'backups:restore', ctx.watch);
  watch.expedite();
  const tracked = await watch.done;
  if (tracked.state === 'untracked') return result; // still accepted: `sitefleet restore` follows it
  if (tracked.state === 'failed') return saved(ctx, step, result, { ...restored, status: 'failed', reason: `operation failed: ${reasonText(tracked)}` });
  if (tracked.state === 'unknown') return saved(ctx, step, result, { ...restored, status: 'unknown', reason: tracked.message });
  return checkRestored(ctx, step, { ...result, restored: { ...restored, status: 'succeeded' } }, gate, url);
}

/** The site checked again after its restore; a restore that had no operation is `succeeded` only if the site is healthy now. */
async function checkRestored(ctx: RestoreContext, step: Step, result: StepResult, gate: HealthGate | undefined, url: string | undefined): Promise<StepResult> {
  const cache = gate && url && ctx.clearCache ? await ctx.clearCache(step) : undefined;
  const verdict = gate && url ? await gate.check(url) : undefined;
  const restored = result.restored!;
  // A halt cut the look after the restore: nobody saw the site since. The journal keeps the restore as
  // its answer left it (accepted), so resume follows it and looks (lifeAt: restoring), then isolates;
  // saved as `succeeded, not checked` it would read as ended, the look and the isolation never done.
  if (gate && url && !verdict && ctx.interrupt?.aborted && restored.operation_id) return { ...result, restored: { ...restored, status: 'accepted' } };
  const health = restoredHealth(verdict, cache);
  if (restored.reason === NO_OPERATION)
    return saved(ctx, step, result, { ...restored, health, status: health.outcome === 'healthy' ? 'succeeded' : 'unknown' });
  return saved(ctx, step, result, { ...restored, health });
}

/** What the check after a restore says; a healthy page seen through a cache that was not cleared is no proof (not checked). */
export function restoredHealth(verdict: HealthVerdict | undefined, cache: CacheClear | undefined): NonNullable<Restored['health']> {
  if (!verdict) return { outcome: 'not checked', ...(cache ? { cache } : {}) };
  if (verdict.healthy && cache?.outcome === 'not cleared')
    return { outcome: 'not checked', detail: `${verdict.detail}, through a page cache that was not cleared (${cache.detail ?? 'not cleared'})`, cache };
  return { outcome: verdict.healthy ? 'healthy' : 'unhealthy', detail: verdict.detail, ...(cache ? { cache } : {}) };
}

async function saved(ctx: RestoreContext, step: Step, result: StepResult, restored: Restored): Promise<StepResult> {
  const next = { ...result, restored };
  await ctx.update(step, next);
  return next;
}

/** The restore's first answer: an operation, done at once, refused, or in question. */
function answerOf(outcome: Outcome<CallResult>): Omit<Restored, 'backup_id'> {
  if (outcome.ok) {
    const answer = writeAnswer(outcome.value!.data);
    if (answer.kind === 'accepted') return { operation_id: answer.operationId, status: 'accepted' };
    if (answer.kind === 'done') return { operation_id: null, status: 'unknown', reason: NO_OPERATION };
    return { operation_id: null, status: 'failed', reason: answer.reason ? reasonText(answer.reason) : `the service answered status ${answer.status}` };
  }
  const reason = outcome.decision?.reason ?? String(outcome.error);
  if (outcome.interrupted && outcome.attempts === 0) return { operation_id: null, status: 'not sent', reason };
  // Sent, and no answer that says it was not taken: never sent again (a second restore loses more).
  if (outcome.decision?.kind === 'unknown' || outcome.interrupted) return { operation_id: null, status: 'unknown', reason };
  return { operation_id: null, status: 'failed', reason };
}

/**
 * A restore read back from a journal (resume): one journaled `sending` may have reached the service
 * and is never sent again; one accepted is followed. Returns the result as it now stands.
 */
export function restoreReadBack(result: StepResult): StepResult {
  if (result.restored?.status !== 'sending') return result;
  return {
    ...result,
    restored: {
      ...result.restored,
      status: 'unknown',
      reason: 'the run stopped while the restore was being sent: it may have reached the service, so it is not sent again; look at the site',
    },
  };
}

/**
 * A restore puts back the environment as it was at its restore point, taken before the task's first
 * write there: the writes of the same environment that went before the broken one (pinned updates,
 * one step per theme) are undone with it. They are no longer reported done: failed, saying why, so the
 * report, the staging record and every sink tell what the environment runs. Returns those writes as
 * they now stand (the caller journals them); none when the restore was refused or never sent. Not
 * counted against a budget again: the one breakage was counted on the write that broke.
 */
export function undoneWrites(steps: readonly Step[], results: ReadonlyMap<string, StepResult>, step: Step, restored: StepResult): [Step, StepResult][] {
  const status = restored.restored?.status;
  if (!status || status === 'failed' || status === 'not sent' || !step.backup_step) return [];
  const put = status === 'unknown' ? 'may have been put back' : 'was put back';
  const from = `${UNDONE}the environment ${put} from backup ${restored.restored!.backup_id}, taken before this write`;
  // Writes looked at together (rollout.together) were seen broken once, after the last: which of them broke it is not known.
  // So were a guard group's (one guard per environment, Step.guard_group).
  const why = (other: Step) =>
    other.joins !== undefined || step.joins !== undefined
      ? `${from}, after its site was seen broken once this environment's writes looked at together with it (rollout.together) ended, the last ${step.precondition ?? step.id}`
      : other.guard_group !== undefined && other.guard_group === step.guard_group
        ? `${from}, after its site was seen broken once this environment's writes (one guard for all of them) ended, the last ${step.precondition ?? step.id}`
        : `${from}, after ${step.precondition ?? step.id} broke its site`;
  return steps.flatMap((other): [Step, StepResult][] => {
    const known = results.get(other.id);
    if (other.id === step.id || other.backup_step !== step.backup_step || !known || !['succeeded', 'held', 'accepted'].includes(known.status)) return [];
    if (isHeldBefore(known)) return []; // never sent: nothing of it to undo
    const { held: _held, ...sent } = known;
    return [[other, { ...sent, status: 'failed', reason: why(other) }]];
  });
}
