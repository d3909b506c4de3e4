import { ITEM_WRITES } from '../../actions/item-writes.js';
import { writtenUpdates } from '../../actions/items-update.js';
import { reasonText, writeAnswer } from '../../api/answer.js';
import { itemOf, type Kind } from '../../inventory/kinds.js';
import type { ItemChange } from '../../actions/action.js';
import { kindOf } from '../../plan/needs.js';
import type { Step } from '../../plan/plan.js';
import type { HealthGate } from '../health-gate.js';
import { PRIORITY } from '../rate-budget.js';
import { restoredHealth, type RestoreContext } from './restore.js';
import type { StepResult, UndoCommand, UndoneByItems } from '../types.js';

/**
 * `health.undo: items_first`: a site a write broke is put back by the versions the write replaced,
 * each by its own files through WP-CLI (`wp plugin install <slug> --version=<old> --force`, `wp theme
 * install …`, `wp core update --version=<old> --force`), then its cache cleared and its page looked
 * at again. Only files move: the orders a shop took since its backup stay. The backup is restored
 * (restore.ts) only when this could not be done or the site is still broken:
 *
 * | what happened                                              | undone      | then            |
 * | an item's name or version outside the command's pattern    | not sent    | restore         |
 * | nothing to put back read from the write (no versions)      | not sent    | restore         |
 * | a halt before a command left                               | sending     | (resume: again) |
 * | a command refused, failed, or its end not known            | failed      | restore         |
 * | every command succeeded, the site healthy again            | succeeded   | ended (failed)  |
 * | every command succeeded, the site still broken (or unseen) | succeeded   | restore         |
 *
 * Each command is journaled `sending` before it leaves: installing one version's files again is safe
 * to repeat, so a resume sends again every command not seen to succeed.
 */
export async function undoByItems(
  ctx: RestoreContext,
  step: Step,
  failed: StepResult,
  gate: HealthGate,
  url: string,
  mates: readonly Step[] = [],
): Promise<StepResult> {
  const planned = failed.undone ?? commandsOf(step, mates);
  const save = async (undone: UndoneByItems) => {
    const next = { ...failed, undone };
    await ctx.update(step, next);
    return next;
  };
  if (planned.status === 'not sent') return save(planned);
  let undone: UndoneByItems = { ...planned, status: 'sending' };
  for (const [i, command] of undone.commands.entries()) {
    if (command.status === 'succeeded') continue;
    if (ctx.interrupt?.aborted) return save(undone);
    undone = withCommand(undone, i, { ...command, status: 'sending', operation_id: null });
    await save(undone);
    const ended = await send(ctx, step, command);
    undone = withCommand(undone, i, ended);
    // A halt while it was followed: left `sending`, so a resume sends it again.
    if (ended.status === 'accepted' || ended.status === 'sending') return save(undone);
    if (ended.status !== 'succeeded') return save({ ...undone, status: 'failed', reason: `${command.wp_command}: ${ended.reason ?? ended.status}` });
    await save(undone);
  }
  // Nobody saw the site since its items went back: resume looks (the commands are not sent again).
  const cache = ctx.clearCache ? await ctx.clearCache(step) : undefined;
  const verdict = ctx.interrupt?.aborted ? undefined : await gate.check(url);
  if (!verdict && ctx.interrupt?.aborted) return save(undone);
  return save({ ...undone, status: 'succeeded', health: restoredHealth(verdict, cache) });
}

/** Whether the items' own files made the site healthy again: nothing more to do, no restore. */
export function healthyByItems(result: StepResult): boolean {
  return result.undone?.status === 'succeeded' && result.undone.health?.outcome === 'healthy';
}

/**
 * The commands that put back what the write replaced (and, one guard per environment, what its
 * group's other writes that did their work replaced: `mates`), or why there are none (then the backup is restored).
 */
export function commandsOf(step: Step, mates: readonly Step[] = []): UndoneByItems {
  const kind = kindOf(step.action);
  const envId = step.target.env_id ?? step.params.env_id;
  const changes = kind && envId ? [...mates, step].flatMap((s) => writtenUpdates(kind, s)) : [];
  if (!kind || !envId) return { status: 'not sent', commands: [], reason: 'the write names no versions it replaced: the backup is the way back' };
  return commandsFor(kind, envId, changes);
}

/** The commands that put back these changes on one environment (an isolation round's, or a write's), or why there are none. */
export function commandsFor(kind: Kind, envId: string, changes: readonly ItemChange[]): UndoneByItems {
  if (changes.length === 0) return { status: 'not sent', commands: [], reason: 'the write names no versions it replaced: the backup is the way back' };
  const commands: UndoCommand[] = [];
  for (const change of changes) {
    const name = itemOf(change)!.name;
    const spec = ITEM_WRITES[kind].putBack(envId, { name, version: change.from });
    if (!spec)
      return {
        status: 'not sent',
        commands: [],
        reason: `${name} ${change.from}: not a slug and numbered version a command may take; the backup is the way back`,
      };
    const wp_command = (spec.body as { wp_command: string }).wp_command;
    commands.push({ kind, name, version: change.from, wp_command, status: 'not sent', operation_id: null });
  }
  return { status: 'sending', commands };
}

function withCommand(undone: UndoneByItems, i: number, command: UndoCommand): UndoneByItems {
  return { ...undone, commands: undone.commands.map((c, j) => (j === i ? command : c)) };
}

/** One command sent and followed to its end: a repair, so it goes first among the calls waiting, and only a halt keeps it back. */
async function send(ctx: RestoreContext, step: Step, command: UndoCommand): Promise<UndoCommand> {
  const params = { env_id: step.target.env_id ?? step.params.env_id! };
  const outcome = await ctx.caller.withPlace(PRIORITY.urgent, 'runWpCliCommand', (place) =>
    ctx.caller.call('runWpCliCommand', params, { wp_command: command.wp_command }, true, { place, priority: PRIORITY.urgent, stopSignal: ctx.interrupt }),
  );
  // A halt on the way: left `sending` (installing the same files again is safe), so a resume sends it again, and no backup is restored for it.
  if (!outcome.ok && outcome.interrupted) return { ...command, status: 'sending', operation_id: null };
  if (!outcome.ok) return { ...command, status: 'failed', reason: outcome.decision?.reason ?? String(outcome.error) };
  const answer = writeAnswer(outcome.value!.data);
  if (answer.kind === 'done') return { ...command, status: 'succeeded' };
  if (answer.kind === 'refused')
    return { ...command, status: 'failed', reason: answer.reason ? reasonText(answer.reason) : `the service answered status ${answer.status}` };
  const watch = ctx.watcher.watch(answer.operationId, 'environment:run-wp-cli-command', ctx.watch);
  watch.expedite();
  const tracked = await watch.done;
  const operation_id = answer.operationId;
  if (tracked.state === 'succeeded') return { ...command, operation_id, status: 'succeeded' };
  if (tracked.state === 'failed') return { ...command, operation_id, status: 'failed', reason: `operation failed: ${reasonText(tracked)}` };
  return { ...command, operation_id, status: tracked.state === 'untracked' ? 'accepted' : 'unknown', reason: tracked.message };
}
