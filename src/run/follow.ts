import type { Logger } from 'pino';
import { ACTIONS } from '../actions/index.js';
import type { BatchConfirmer } from './batch-confirm.js';
import type { Step } from '../plan/plan.js';
import { sleepOn, type Clock } from '../util/clock.js';
import { operationEnd } from './operation-end.js';
import { PRIORITY } from './rate-budget.js';
import { sendStep, type SendContext } from './send-step.js';
import type { RunStop } from './run-stop.js';
import type { StepResult } from './types.js';
import type { Watch, Watcher, WatchOptions } from './watcher.js';

/** How the service says an environment is busy with another operation. */
export const BLOCKED = /blocked by another process/i;
export const MAX_BLOCKED_RETRIES = 3;

export interface FollowContext extends SendContext {
  watcher: Watcher;
  stop: RunStop;
  logger: Logger;
  /** First wait before re-sending a step whose operation found the environment busy (doubles each time). */
  blockedBackoffMs: number;
  clock: Clock;
  /** Records a later word on a step (journal, report, progress). */
  update(step: Step, result: StepResult): Promise<void>;
  /** Confirms operations of actions with `confirmBatch` by reading the listing. @default every operation polled */
  confirmer?: BatchConfirmer;
}

/**
 * Follows an accepted step's operation to its end through the watcher, and records the outcome.
 *
 * When the operation fails because something outside the run occupies the environment, nothing
 * happened, so even a creating call may go again: it is re-sent after 2, 4, 8 s. The step is
 * journaled as `unknown` before each re-send, so a crash during it can't lead to a double send.
 */
export class OperationFollower {
  #watch: Watch | undefined;
  #settling: { expedite(): void } | undefined;
  #urgent = false;
  readonly done: Promise<StepResult>;

  constructor(
    private readonly context: FollowContext,
    private readonly step: Step,
    accepted: StepResult,
    private readonly options: WatchOptions,
    acceptedAt?: number,
    /** Wall time of acceptance, for the listing's `last_updated_at`; none for an operation of unknown age. */
    acceptedWall?: number,
  ) {
    this.done = this.#follow(accepted, acceptedAt, acceptedWall);
  }

  /** Something waits for this operation: poll it ahead of writes. */
  expedite(): void {
    this.#urgent = true;
    this.#watch?.expedite();
    this.#settling?.expedite();
  }

  async #follow(first: StepResult, firstAcceptedAt: number | undefined, acceptedWall: number | undefined): Promise<StepResult> {
    const { context, step } = this;
    let accepted = first;
    let acceptedAt = firstAcceptedAt;
    // An action whose operations a read of the listing confirms in batches: polled only if the listing cannot settle it.
    const confirm = ACTIONS.get(step.action)?.confirmBatch;
    if (confirm && context.confirmer && acceptedAt !== undefined && acceptedWall !== undefined) {
      const settling = context.confirmer.settle(step.action, confirm, step, { acceptedAt, acceptedWall, timeoutMs: this.options.timeoutMs });
      this.#settling = settling;
      if (this.#urgent) settling.expedite();
      if ((await settling.done) === 'listing') {
        const final: StepResult = { ...accepted, status: 'succeeded', confirmed_by: 'listing' };
        await context.update(step, final);
        return final;
      }
    }
    for (let blocked = 0; ; blocked++) {
      this.#watch = context.watcher.watch(accepted.operation_id!, step.action, this.options, acceptedAt);
      if (this.#urgent) this.#watch.expedite();
      const tracked = await this.#watch.done;
      if (tracked.state === 'untracked') {
        if (tracked.stop) context.stop.stop(tracked.message, tracked.stop);
        return accepted; // still accepted: `sitefleet status` or `resume` can look again later
      }
      if (tracked.state === 'failed' && BLOCKED.test(tracked.message) && blocked < MAX_BLOCKED_RETRIES && !context.stop.stopped) {
        context.logger.info({ step: step.id, operation_id: accepted.operation_id }, 'environment busy; sending again');
        await sleepOn(context.clock, context.blockedBackoffMs * 2 ** blocked, context.stop.signal);
        if (context.stop.stopped) return accepted;
        // Journal first that the step is in question: if the process dies during the re-send, a
        // resume must not take the earlier (failed) operation for the step's answer and send again.
        const previous = accepted;
        const { again, result } = await context.caller.withPlace(PRIORITY.write, step.endpoint, async (place) => {
          await context.update(step, {
            ...previous,
            status: 'unknown',
            operation_id: null,
            reason: 'sent again after the environment was busy; no answer recorded',
          });
          const again = await sendStep(step, context, context.stop.signal, place);
          const result = { ...again.result, attempts: previous.attempts + again.result.attempts };
          await context.update(step, result);
          return { again, result };
        });
        if (again.stopRun) context.stop.stop(result.reason!, again.stopRun);
        if (result.status !== 'accepted') return result;
        accepted = result;
        acceptedAt = undefined;
        continue;
      }
      const final: StepResult = { ...accepted, ...operationEnd(step.action, tracked, accepted.reason) };
      await context.update(step, final);
      return final;
    }
  }
}
