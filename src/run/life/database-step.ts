import { reasonText, writeAnswer } from '../../api/answer.js';
import { CORE_DATABASE } from '../../actions/after-update.js';
import { databaseCommands } from '../../plan/database-commands.js';
import type { Step, TaskSummary } from '../../plan/plan.js';
import type { CallPort } from '../caller.js';
import { PRIORITY } from '../rate-budget.js';
import type { DatabaseRun, DatabaseHeld, StepResult } from '../types.js';
import type { Watcher, WatchOptions } from '../watcher.js';

/**
 * The database step of a write that moved WordPress or a plugin (the life's `updating_database`):
 * `wp core update` moves WordPress's files and leaves its database as it was, so after an x.y release
 * every site says "Database update required" until `wp core update-db` runs (real-service-notes.md,
 * "After an update"); some plugins have a step of their own (WooCommerce: `wp wc update`). Each
 * command goes through the WP-CLI endpoint and its operation is followed to its end.
 *
 * Nothing the service sent enters a command: every command is a constant of actions/after-update.ts,
 * chosen by the task's action and by item slugs the playbook's schema let through (`after_update`).
 * `--network` is never added: the service's listing does not say which environment is a multisite,
 * and on one that is not, WP-CLI refuses it; on a multisite, `wp core update-db` upgrades the main
 * site's tables only (docs/playbooks.md says so and how to run the network's).
 */

/** What the step needs of the run: its calls, its watcher, its journal, and its halt. */
export interface DatabaseContext {
  caller: CallPort;
  watcher: Watcher;
  watch: WatchOptions;
  record(step: Step, result: StepResult): Promise<void>;
  /** A halt: a command not yet sent is not sent (`not sent`; resume sends it). */
  interrupt: AbortSignal;
}

/**
 * After the write's operation succeeded, before its look: each command run in turn (or taken on
 * where a journal left it). The write's status is left as it is here: a guarded write is still
 * looked at (heldByDatabase holds it once its life ended).
 */
export async function updateDatabase(ctx: DatabaseContext, task: TaskSummary, step: Step, result: StepResult): Promise<StepResult> {
  // Resume: a write a halt held with its step left under way is taken on as the succeeded write it was.
  const open = result.held?.code === 'database_not_updated' && databaseLeft(result) ? reopened(result) : result;
  if (open.status !== 'succeeded') return result;
  return runAll(ctx, step, open, databaseCommands(task, step), 'update');
}

function reopened(result: StepResult): StepResult {
  const { held: _held, ...rest } = result;
  return { ...rest, status: 'succeeded', reason: null };
}

/**
 * After a restore, or a put-back by its own files (`wp core update --version=<old> --force`,
 * health.undo: items_first), that moved a core write's environment back: WordPress's database step.
 * `restoredBy`: the write whose restore put this one's environment back with it (rollout.together:
 * the group's last write, restored for all of them; undoneWrites says so on this one).
 */
export async function updateDatabaseAfterRestore(
  ctx: DatabaseContext,
  task: TaskSummary,
  step: Step,
  result: StepResult,
  restoredBy?: StepResult,
): Promise<StepResult> {
  const movedBack = [result, restoredBy].some((r) => r?.restored?.status === 'succeeded' || r?.undone?.status === 'succeeded');
  if (!databaseCommands(task, step).includes(CORE_DATABASE) || !movedBack) return result;
  return runAll(ctx, step, result, [CORE_DATABASE], 'restore');
}

/**
 * A database step after a restore journaled as not ended: all that is left of its life (the write
 * stays failed, and its health record is the one the restore's look wrote, which no new look replaces).
 */
export function restoreDatabaseLeft(known: StepResult): boolean {
  return (known.database ?? []).some((d) => d.after === 'restore' && (d.status === 'sending' || d.status === 'accepted' || d.status === 'not sent'));
}

/**
 * A write whose database step did not succeed is not `succeeded`: `held`, `database_not_updated`,
 * counted against the failure budget. Held, not failed: the write did move the site (read back says
 * so), a restore would lose what the site did since its backup, and a failed write waits to be sent
 * again, which its new version would never be; what is left is one command a person runs.
 */
export function heldByDatabase(result: StepResult): StepResult {
  const left = (result.database ?? []).filter((d) => d.after === 'update' && d.status !== 'succeeded');
  if (result.status !== 'succeeded' || left.length === 0) return result;
  const detail = left.map((d) => `\`${d.command}\` ${d.status}${d.reason ? `: ${d.reason}` : ''}`).join('; ');
  const held: DatabaseHeld = {
    code: 'database_not_updated',
    detail,
    override: `run ${left.map((d) => `\`${d.command}\``).join(' and ')} on the environment (a wp_cli.run task), then look at its dashboard`,
    counts_against_budget: true,
  };
  return { ...result, status: 'held', held, reason: `database_not_updated: the write moved the site, its database step did not end well (${detail})` };
}

/** A database step journaled as not ended: sending (it may not have left), accepted (its operation to follow), or not sent. */
export function databaseLeft(known: StepResult): boolean {
  return (known.database ?? []).some((d) => d.status === 'sending' || d.status === 'accepted' || d.status === 'not sent');
}

async function runAll(ctx: DatabaseContext, step: Step, start: StepResult, commands: string[], after: DatabaseRun['after']): Promise<StepResult> {
  let result = start;
  for (const command of commands) {
    const at = (result.database ?? []).findIndex((d) => d.command === command && d.after === after);
    const known = at >= 0 ? result.database![at]! : undefined;
    if (known && known.status !== 'sending' && known.status !== 'accepted' && known.status !== 'not sent') continue;
    result = await runOne(ctx, step, result, known ?? { command, after, status: 'sending', operation_id: null });
  }
  return result;
}

/** One command: journaled before it leaves (both commands are safe to send again, so a resume sends one left `sending`), then followed. */
async function runOne(ctx: DatabaseContext, step: Step, result: StepResult, run: DatabaseRun): Promise<StepResult> {
  const save = async (next: DatabaseRun) => {
    const others = (result.database ?? []).filter((d) => !(d.command === next.command && d.after === next.after));
    result = { ...result, database: [...others, next] };
    await ctx.record(step, result);
    return next;
  };
  let now = run;
  if (now.status !== 'accepted') {
    if (ctx.interrupt.aborted) return (await save({ ...now, status: 'not sent', reason: 'the run halted first; resume sends it' }), result);
    now = await save({ ...now, status: 'sending', operation_id: null });
    now = await save({ ...now, ...(await send(ctx, step, now.command)) });
  }
  if (now.status === 'accepted') await save({ ...now, ...(await follow(ctx, now.operation_id!)) });
  return result;
}

async function send(ctx: DatabaseContext, step: Step, command: string): Promise<Pick<DatabaseRun, 'status' | 'operation_id' | 'reason'>> {
  const envId = step.target.env_id ?? step.lock ?? '';
  const outcome = await ctx.caller.withPlace(PRIORITY.urgent, 'runWpCliCommand', (place) =>
    ctx.caller.call('runWpCliCommand', { env_id: envId }, { wp_command: command }, true, { place, priority: PRIORITY.urgent, stopSignal: ctx.interrupt }),
  );
  if (!outcome.ok && outcome.interrupted && outcome.attempts === 0)
    return { status: 'not sent', operation_id: null, reason: 'the run halted first; resume sends it' };
  if (!outcome.ok)
    return {
      status: outcome.decision?.kind === 'unknown' ? 'unknown' : 'failed',
      operation_id: null,
      reason: outcome.decision?.reason ?? String(outcome.error),
    };
  const answer = writeAnswer(outcome.value!.data);
  if (answer.kind === 'accepted') return { status: 'accepted', operation_id: answer.operationId };
  if (answer.kind === 'done') return { status: 'succeeded', operation_id: null };
  return { status: 'failed', operation_id: null, reason: answer.reason ? reasonText(answer.reason) : `the service answered status ${answer.status}` };
}

async function follow(ctx: DatabaseContext, operationId: string): Promise<Pick<DatabaseRun, 'status' | 'reason'>> {
  const watch = ctx.watcher.watch(operationId, 'environment:run-wp-cli-command', ctx.watch);
  watch.expedite();
  const tracked = await watch.done;
  if (tracked.state === 'succeeded') return { status: 'succeeded' };
  if (tracked.state === 'failed') return { status: 'failed', reason: `operation failed: ${reasonText(tracked)}` };
  // Untracked (a halt): still accepted, so a resume follows it.
  return tracked.state === 'untracked' ? { status: 'accepted' } : { status: 'unknown', reason: tracked.message };
}
