import type { Step } from '../plan/plan.js';
import type { StepResult } from './types.js';
import type { JournalState } from './journal.js';
import { groupSettlement } from './life/guard-group.js';
import { restoreReadBack } from './life/restore.js';
import { lifeAt } from './life/state.js';

export interface ResumePlan {
  /** Results that stand: those steps are not sent again. */
  initial: Map<string, StepResult>;
  ended: Step[];
  /** Never sent (or skipped when the run stopped): will be sent. */
  neverSent: Step[];
  /** Sent, no answer recorded, safe to repeat: will be sent again. */
  resend: Step[];
  /** Sent, no answer recorded, and they create something: left `unknown` for a person to check. */
  leftUnknown: Step[];
  /** Accepted operations a waiting task will poll (a restore's among them). */
  toPoll: Step[];
  /** A restore journaled as being sent and never answered: `unknown` now, never sent again (journaled by resume). */
  restoresInQuestion: Step[];
  /** `health.on_broken: isolate`: isolation the run left under way (or never began after a restore that ended healthy): it goes on. */
  toIsolate: Step[];
  /** Guarded writes whose look after never ran (the run died or halted first): their cache is cleared and their page looked at. */
  toLook: Step[];
  /** Broken sites whose restore a halt kept from leaving: restored now, from the run's restore point. */
  toRestore: Step[];
  /** Broken sites whose items a halt caught going back (health.undo: items_first): the commands not seen to succeed go again, then the look. */
  toUndo: Step[];
  /**
   * Guard groups whose isolation ended before their writes said what became of their items (a kill came
   * between): what each says, already in `initial`, for resume to journal; nothing is sent for it.
   */
  toSettle: { holder: Step; said: [Step, StepResult][] }[];
}

/**
 * What `sitefleet resume` does with each step of the journal's plan: ended steps are left alone;
 * never-sent ones are sent; ones sent without an answer are sent again only when that is safe.
 */
export function planResume(state: JournalState): ResumePlan {
  const plan = state.start.plan;
  const waits = new Set(plan.tasks.filter((t) => t.wait).map((t) => t.index));
  const out: ResumePlan = {
    initial: new Map(),
    ended: [],
    neverSent: [],
    resend: [],
    leftUnknown: [],
    toPoll: [],
    restoresInQuestion: [],
    toIsolate: [],
    toLook: [],
    toRestore: [],
    toUndo: [],
    toSettle: [],
  };
  for (const step of plan.steps) {
    const result = state.results.get(step.id);
    if (result && result.status !== 'skipped') {
      out.ended.push(step);
      const known = restoreReadBack(result);
      out.initial.set(step.id, known);
      if (known !== result) out.restoresInQuestion.push(step);
      if (result.status === 'accepted' && result.operation_id && waits.has(step.task_index)) out.toPoll.push(step);
      const life = lifeAt(
        plan.tasks.find((t) => t.index === step.task_index)!,
        step,
        known,
      );
      if (life === 'restoring') (known.restored?.status === 'not sent' ? out.toRestore : out.toPoll).push(step);
      else if (life === 'isolating') out.toIsolate.push(step);
      // A database step left under way is taken on as the look after is (lookAgain), before any look.
      else if (life === 'looking_after' || life === 'updating_database') out.toLook.push(step);
      else if (life === 'undoing') out.toUndo.push(step);
    } else if ((state.intents.get(step.id) ?? 0) > 0 && !result) {
      if (step.idempotent) {
        out.resend.push(step);
      } else {
        out.leftUnknown.push(step);
        out.initial.set(step.id, {
          step_id: step.id,
          status: 'unknown',
          http_status: null,
          operation_id: null,
          attempts: state.intents.get(step.id)!,
          error: null,
          reason: 'sent before the interruption, and no answer was recorded; a creating call is not re-sent: check it by hand',
          // A restore point's room was made before it was asked for: its removals are this record's too.
          ...(state.room.has(step.id) ? { backup_slots: state.room.get(step.id)! } : {}),
        });
      }
    } else {
      out.neverSent.push(step);
    }
  }
  // After the loop: a group's mates may come after its holder in the plan, and each is read from `initial`.
  settleUnsaid(plan.steps, out);
  return out;
}

/** Guard groups a kill left unsettled: what their writes say, into `initial` and `toSettle`. */
function settleUnsaid(steps: readonly Step[], out: ResumePlan): void {
  for (const holder of out.ended) {
    const said = groupSettlement(steps, holder, out.initial.get(holder.id)!, out.initial);
    for (const [step, result] of said) out.initial.set(step.id, result);
    if (said.length > 0) out.toSettle.push({ holder, said });
  }
}
