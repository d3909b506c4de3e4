import { setTimeout as sleep } from 'node:timers/promises';
import PQueue from 'p-queue';
import type { Logger } from 'pino';
import type { CallResult, HostingClient } from '../api/client.js';
import { creates, type EndpointName } from '../api/endpoints.js';
import type { OperationStatus } from '../api/types.js';
import { AbortedError, CoordinationError, RateLimitedTooLongError, RateLimitError } from '../errors.js';
import type { SharedWindow, SlotOutcome, WindowLane } from '../coord/types.js';
import { PRIORITY, type Priority, type RateBudget } from './rate-budget.js';
import { decide, DEFAULT_RETRY, type Decision, type RetryPolicy } from './retry.js';

export interface Outcome<T> {
  ok: boolean;
  value?: T;
  error?: unknown;
  decision?: Decision;
  attempts: number;
  /**
   * The run stopped before the call had an answer that counts: it was never sent, or it was waiting
   * to retry after attempts that were refused (429), never reached the server, or are safe to repeat.
   * Either way the service accepted nothing, and `resume` must send it.
   */
  interrupted?: boolean;
}

export type CallOutcome = Outcome<CallResult>;

/** How one attempt ended: never sent (the run stopped, or the coordination was lost: `cause`), answered, or failed. */
type Attempt<T> = { sent: false; cause?: unknown } | { sent: true; ok: true; value: T } | { sent: true; ok: false; error: unknown };

export interface CallHooks {
  /** Called right before each attempt is sent (the journal records intent here). */
  beforeAttempt?(attempt: number): void | Promise<void>;
  /** Stops starting new attempts (and waiting for a slot); a call in flight ends normally. */
  stopSignal?: AbortSignal;
  /** The body was checked against its schema when the plan was built. */
  prevalidated?: boolean;
  /** Who goes first when calls wait for the budget (default: a write's priority). */
  priority?: Priority;
  /** The caller already holds a place among the calls in flight (`withSlot`). */
  holdingSlot?: boolean;
  /** Parameters also sent in the query string. */
  query?: Record<string, string | number>;
}

export interface CallerOptions {
  budget?: RateBudget;
  /**
   * The service's separate limit on creating calls (see `creates`): taken before `budget` by those
   * calls only. A 429 on a creating call while `budget` has room teaches this rule, not the general
   * one, so polls, reads and other writes never slow down for it.
   */
  creation?: RateBudget;
  /** The company's shared window of creating calls (--coordination). */
  sharedCreation?: SharedWindow;
  /**
   * The company's window shared with other processes (--coordination). Asked last, holding the place
   * among the calls in flight, right before sending: a slot of it is only ever held by a call about to
   * go out, never by one waiting for something else of this process (that would starve every process).
   */
  shared?: SharedWindow;
  logger: Logger;
  retry?: RetryPolicy;
  /** HTTP calls in flight at once, whatever they are (writes, polls, reads). Default 8. */
  concurrency?: number;
}

/**
 * Every request of a run goes through here: it takes a slot of the shared rate budget, sends, gives
 * the slot back, and retries by error class. Reads and operation polls use it as well as writes, so
 * everything counts against the one budget the service enforces.
 */
export class Caller {
  readonly budget: RateBudget | undefined;
  readonly creation: RateBudget | undefined;
  readonly shared: SharedWindow | undefined;
  readonly sharedCreation: SharedWindow | undefined;
  readonly logger: Logger;
  readonly retry: RetryPolicy;
  /** Bounds the HTTP calls in flight. A call waiting out a backoff holds no place in it. */
  readonly #slots: PQueue;
  /**
   * Creating calls pass through here before they take a place: they may wait long for the creation
   * rule (5 a minute), and must never hold every place while they do, or polls and reads would
   * wait behind them. Half the places at most.
   */
  readonly #creating: PQueue;

  constructor(
    readonly client: HostingClient,
    options: CallerOptions,
  ) {
    this.budget = options.budget;
    this.creation = options.creation;
    this.shared = options.shared;
    this.sharedCreation = options.sharedCreation;
    this.logger = options.logger;
    this.retry = options.retry ?? DEFAULT_RETRY;
    this.#slots = new PQueue({ concurrency: options.concurrency ?? 8 });
    this.#creating = new PQueue({ concurrency: Math.max(1, Math.floor((options.concurrency ?? 8) / 2)) });
  }

  call(endpoint: EndpointName, params: Record<string, string>, body: unknown, idempotent: boolean, hooks: CallHooks = {}): Promise<CallOutcome> {
    return this.#withRetries(
      () => this.client.call(endpoint, params, body, { prevalidated: hooks.prevalidated, query: hooks.query }),
      idempotent,
      hooks,
      endpoint,
    );
  }

  /**
   * Runs `work` holding one place among the calls in flight. A step's send holds it until its answer
   * is journaled and counted against the failure budget, so a stop (a 401, a crossed budget) is
   * seen before the next step goes out. Work that calls a creating `endpoint` first passes the gate
   * of creating calls.
   */
  withSlot<T>(priority: Priority, work: () => Promise<T>, endpoint?: EndpointName | 'getOperation'): Promise<T> {
    const place = () => this.#slots.add(work, { priority: -priority });
    return endpoint !== undefined && creates(endpoint) ? this.#creating.add(place, { priority: -priority }) : place();
  }

  /** One look at an operation's status (a GET: always safe to repeat); polls wait behind writes unless told otherwise. */
  poll(operationId: string, hooks: CallHooks = {}): Promise<Outcome<OperationStatus>> {
    return this.#withRetries(() => this.client.getOperation(operationId), true, { priority: PRIORITY.poll, ...hooks }, 'getOperation');
  }

  /** A read that must succeed (inventory): retried like any safe call; its final error is thrown. */
  async read<T>(endpoint: EndpointName, params: Record<string, string>, body?: unknown, options: { query?: Record<string, string | number> } = {}): Promise<T> {
    const outcome = await this.call(endpoint, params, body, true, { query: options.query });
    if (!outcome.ok) throw outcome.error;
    return outcome.value!.data as T;
  }

  async #withRetries<T>(send: () => Promise<T>, idempotent: boolean, hooks: CallHooks, endpoint: EndpointName | 'getOperation'): Promise<Outcome<T>> {
    let lastRefusal = '';
    // A coordination lost while waiting (Redis gone) is said as such: reads fail with it (exit 3).
    const notSent = (attempts: number, cause?: unknown): Outcome<T> => ({
      ok: false,
      error: cause instanceof CoordinationError ? cause : new AbortedError('run interrupted'),
      decision: {
        kind: 'failed',
        reason: attempts === 0 ? 'not sent: run stopped' : `not accepted: the run stopped while the call waited to be retried (${lastRefusal})`,
      },
      attempts,
      interrupted: true,
    });
    let limitedSince: number | undefined;
    for (let attempt = 1; ; attempt++) {
      const result = await this.#attempt(send, attempt, hooks, endpoint);
      if (!result.sent) return notSent(attempt - 1, result.cause);
      if (result.ok) return { ok: true, value: result.value, attempts: attempt };
      const limited = result.error instanceof RateLimitError;
      if (limited) limitedSince ??= performance.now();
      const limitedFor = limitedSince === undefined ? 0 : performance.now() - limitedSince;
      const decision = decide(result.error, attempt, idempotent, this.retry, limitedFor);
      this.logger.debug({ call: endpoint, attempt, error: (result.error as Error).message, decision: decision.kind }, 'call failed');
      if (decision.kind !== 'retry') {
        // Refused for longer than the run may wait: said as such (who else uses the key, what to do).
        const refused = result.error as RateLimitError;
        const error = limited ? new RateLimitedTooLongError(limitedFor, `${refused.method} ${refused.path}`, { cause: refused }) : result.error;
        return { ok: false, error, decision, attempts: attempt };
      }
      lastRefusal = decision.reason;
      // A 429 already paused the whole budget for Retry-After; the call itself waits the same.
      await sleep(decision.delayMs, undefined, { signal: hooks.stopSignal }).catch(() => undefined);
    }
  }

  /**
   * One attempt: a place among the calls in flight (a step's send already holds one; a creating call
   * passes its gate first), then a slot of the creation rule (creating calls), of this process's
   * budget, of the shared windows (with coordination), then the send. Every call takes them in this
   * one order, so none ever waits for one while holding another that the call it waits on needs: a
   * poll holding a budget slot while waiting for a place, with every place held by a write waiting
   * for the budget, would stop the run for good.
   */
  #attempt<T>(send: () => Promise<T>, attempt: number, hooks: CallHooks, endpoint: EndpointName | 'getOperation'): Promise<Attempt<T>> {
    const signal = hooks.stopSignal;
    const priority = hooks.priority ?? PRIORITY.write;
    const creating = creates(endpoint);
    const once = async (): Promise<Attempt<T>> => {
      const held: Slot[] = [];
      if (creating && this.creation) held.push(budgetSlot('create', this.creation, signal, priority));
      if (this.budget) held.push(budgetSlot('general', this.budget, signal, priority));
      if (this.shared) held.push(windowSlot('general', this.shared, signal));
      if (creating && this.sharedCreation) held.push(windowSlot('create', this.sharedCreation, signal));
      const release = (outcome: SlotOutcome) => {
        // Which limit refused a 429: a creating call's, while the general window had room, was the
        // creation rule's. Only that rule learns; the others count nothing (the server did not).
        const refusedBy: WindowLane | undefined = !outcome.rateLimited
          ? undefined
          : creating && this.creation && (this.budget?.hasRoom() ?? true)
            ? 'create'
            : 'general';
        for (const slot of held) if (slot.taken) slot.give(refusedBy && slot.lane !== refusedBy ? { notSent: true } : outcome);
      };
      try {
        // The run may have stopped (a 401, Ctrl-C) while this call waited for its place.
        if (signal?.aborted) return { sent: false };
        for (const slot of held) {
          if (signal?.aborted) throw signal.reason;
          await slot.take();
          slot.taken = true;
        }
      } catch (cause) {
        release({ notSent: true });
        return { sent: false, cause };
      }
      let sending = false;
      try {
        await hooks.beforeAttempt?.(attempt);
        sending = true;
        const value = await send();
        release({});
        return { sent: true, ok: true, value };
      } catch (error) {
        const limited = error instanceof RateLimitError;
        release(sending ? { rateLimited: limited, retryAfterMs: limited ? error.retryAfterMs : undefined } : { notSent: true });
        return { sent: true, ok: false, error };
      }
    };
    return hooks.holdingSlot ? once() : this.withSlot(priority, once, endpoint);
  }
}

/** A slot of one of the service's limits, taken before a call and given back with its outcome. */
interface Slot {
  lane: WindowLane;
  take(): Promise<void>;
  give(outcome: SlotOutcome): void;
  taken?: boolean;
}

function budgetSlot(lane: WindowLane, budget: RateBudget, signal: AbortSignal | undefined, priority: Priority): Slot {
  return { lane, take: () => budget.acquire(signal, priority), give: (outcome) => budget.release(outcome) };
}

function windowSlot(lane: WindowLane, window: SharedWindow, signal: AbortSignal | undefined): Slot {
  return { lane, take: () => window.take(signal), give: (outcome) => window.give(outcome) };
}
