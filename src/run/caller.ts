import PQueue from 'p-queue';
import type { Logger } from 'pino';
import type { CallResult, HostingClient } from '../api/client.js';
import { laneOf, perEnvironment, type EndpointName, type ReadAnswers, type ReadEndpoint } from '../api/endpoints.js';
import type { OperationStatus } from '../api/types.js';
import type { SharedWindow, WindowLane } from '../coord/types.js';
import {
  inPlace,
  retrying,
  sending,
  throttled,
  type CallTarget,
  type Limit,
  type Outcome,
  type RefusedBy,
  type Send,
  type TakePlace,
} from './call-pipeline.js';
import { PRIORITY, type Priority, type RateBudget } from './rate-budget.js';
import { DEFAULT_RETRY, type RetryPolicy } from './retry.js';

export type { Outcome } from './call-pipeline.js';
export type CallOutcome = Outcome<CallResult>;

declare const placeBrand: unique symbol;

/**
 * A place among the calls in flight, held by work that makes a call within it (`Caller.withPlace`):
 * given to `call`, the call takes no second one. Only `withPlace` makes one (the brand is this file's).
 */
export type HeldPlace = { readonly priority: Priority; readonly [placeBrand]: true };

/**
 * What a run needs of the calls it makes: the port the executor is written against. `Caller` is the
 * real one; tests script a fake (test/run/executor.test.ts).
 */
export interface CallPort {
  call(endpoint: EndpointName, params: Record<string, string>, body: unknown, idempotent: boolean, hooks?: CallHooks): Promise<CallOutcome>;
  poll(operationId: string, hooks?: CallHooks): Promise<Outcome<OperationStatus>>;
  withPlace<T>(priority: Priority, endpoint: EndpointName, work: (place: HeldPlace) => Promise<T>): Promise<T>;
  read<N extends ReadEndpoint>(
    endpoint: N,
    params: Record<string, string>,
    body?: unknown,
    options?: { query?: Record<string, string | number>; priority?: Priority; stopSignal?: AbortSignal },
  ): Promise<ReadAnswers[N]>;
}

export interface CallHooks {
  /** Called right before each attempt is sent (the journal records intent here). */
  beforeAttempt?(attempt: number): void | Promise<void>;
  /** Stops starting new attempts (and waiting for a slot); a call in flight ends normally. */
  stopSignal?: AbortSignal;
  /** Who goes first when calls wait for the budget (default: a write's priority). */
  priority?: Priority;
  /** The place among the calls in flight this call's work holds already (`withPlace`): the call takes none of its own. */
  place?: HeldPlace;
  /** Parameters also sent in the query string. */
  query?: Record<string, string | number>;
}

/** Calls in flight at once when neither the playbook nor --concurrency says. */
export const DEFAULT_CONCURRENCY = 8;

export interface CallerOptions {
  budget?: RateBudget;
  /**
   * The service's separate limit on creating calls (see `creates`): taken before `budget` by those
   * calls only. A 429 on a creating call while `budget` has room teaches this rule, not the general
   * one, so polls, reads and other writes never slow down for it.
   */
  creation?: RateBudget;
  /**
   * The logs endpoint's own limit (run/error-log.ts LOGS_RATE), taken before `budget` by log reads
   * only: a run that reads many logs (sites broken at once) waits for this rule, and leaves the general
   * one to writes and polls; a 429 on a log read while `budget` has room teaches this rule alone.
   */
  logs?: RateBudget;
  /** The company's shared window of creating calls (--coordination). */
  sharedCreation?: SharedWindow;
  /** The company's shared window of log reads (--coordination): the logs rule is the company's, not one process's. */
  sharedLogs?: SharedWindow;
  /**
   * The company's window shared with other processes (--coordination). Asked last, holding the place
   * among the calls in flight, right before sending: a slot of it is only ever held by a call about to
   * go out, never by one waiting for something else of this process (that would starve every process).
   */
  shared?: SharedWindow;
  logger: Logger;
  /** @default DEFAULT_RETRY (5 attempts, 429s waited out for up to 10 minutes) */
  retry?: RetryPolicy;
  /** HTTP calls in flight at once, whatever they are (writes, polls, reads). @default DEFAULT_CONCURRENCY (8) */
  concurrency?: number;
}

/**
 * Every request of a run goes through here: it takes a slot of the shared rate budget, sends, gives
 * the slot back, and retries by error class. Reads and operation polls use it as well as writes, so
 * everything counts against the one budget the service enforces.
 */
export class Caller implements CallPort {
  readonly budget: RateBudget | undefined;
  readonly creation: RateBudget | undefined;
  readonly logs: RateBudget | undefined;
  readonly shared: SharedWindow | undefined;
  readonly sharedCreation: SharedWindow | undefined;
  readonly sharedLogs: SharedWindow | undefined;
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
  /**
   * Log reads likewise (their rule: 35 a minute): sites broken at once each read theirs, and those
   * waiting for the rule must leave places for the polls, writes and restores. A quarter at most.
   */
  readonly #logging: PQueue;
  /** The limits each call takes, built once (this is every call's path). */
  readonly #budgets: Record<WindowLane, Limit[]>;
  readonly #windows: Record<WindowLane, Limit[]>;

  constructor(
    readonly client: HostingClient,
    options: CallerOptions,
  ) {
    this.budget = options.budget;
    this.creation = options.creation;
    this.logs = options.logs;
    this.shared = options.shared;
    this.sharedCreation = options.sharedCreation;
    this.sharedLogs = options.sharedLogs;
    this.logger = options.logger;
    this.retry = options.retry ?? DEFAULT_RETRY;
    const concurrency = options.concurrency ?? DEFAULT_CONCURRENCY;
    this.#slots = new PQueue({ concurrency });
    this.#creating = new PQueue({ concurrency: Math.max(1, Math.floor(concurrency / 2)) });
    this.#logging = new PQueue({ concurrency: Math.max(1, Math.floor(concurrency / 4)) });
    // Each rule of its own first, then the general one: a call waiting for its own rule holds no general slot.
    const general = this.budget ? [budgetLimit('general', this.budget)] : [];
    const own = (lane: WindowLane, budget: RateBudget | undefined) => [...(budget ? [budgetLimit(lane, budget)] : []), ...general];
    this.#budgets = { general, create: own('create', this.creation), logs: own('logs', this.logs) };
    const shared = this.shared ? [windowLimit('general', this.shared)] : [];
    const sharedOwn = (lane: WindowLane, window: SharedWindow | undefined) => [...shared, ...(window ? [windowLimit(lane, window)] : [])];
    this.#windows = { general: shared, create: sharedOwn('create', this.sharedCreation), logs: sharedOwn('logs', this.sharedLogs) };
  }

  /** Calls waiting for a place among the calls in flight (none of them has asked the budget yet). */
  get waitingForPlace(): number {
    return this.#slots.size;
  }

  call(endpoint: EndpointName, params: Record<string, string>, body: unknown, idempotent: boolean, hooks: CallHooks = {}): Promise<CallOutcome> {
    const send = () => this.client.call(endpoint, params, body, { query: hooks.query });
    return this.#pipeline(
      endpoint,
      idempotent,
      hooks,
      sending(send, (attempt) => hooks.beforeAttempt?.(attempt)),
    );
  }

  /**
   * Runs `work` holding one place among the calls in flight; calls it makes with `{ place }` take no
   * other. A step's send holds it until its answer is journaled and counted against the failure
   * budget, so a stop (a 401, a crossed budget) is seen before the next step goes out. Work that
   * calls a creating `endpoint` first passes the gate of creating calls.
   */
  withPlace<T>(priority: Priority, endpoint: EndpointName, work: (place: HeldPlace) => Promise<T>): Promise<T> {
    return this.#takePlace(priority, endpoint, () => work({ priority } as HeldPlace));
  }

  /** One look at an operation's status (a GET: always safe to repeat); polls wait behind writes unless told otherwise. */
  poll(operationId: string, hooks: CallHooks = {}): Promise<Outcome<OperationStatus>> {
    return this.#pipeline(
      'getOperation',
      true,
      { priority: PRIORITY.poll, ...hooks },
      sending(() => this.client.getOperation(operationId)),
    );
  }

  /** A read that must succeed (inventory): retried like any safe call; its final error is thrown. */
  async read<N extends ReadEndpoint>(
    endpoint: N,
    params: Record<string, string>,
    body?: unknown,
    options: { query?: Record<string, string | number>; priority?: Priority; stopSignal?: AbortSignal } = {},
  ): Promise<ReadAnswers[N]> {
    const outcome = await this.call(endpoint, params, body, true, {
      query: options.query,
      ...(options.priority === undefined ? {} : { priority: options.priority }),
      ...(options.stopSignal ? { stopSignal: options.stopSignal } : {}),
    });
    if (!outcome.ok) throw outcome.error;
    // Held to the endpoint's answer schema where it arrived (HostingClient.call), so it is what the type says.
    return outcome.value!.data as ReadAnswers[N];
  }

  /** The layers of call-pipeline.ts, outermost first. A call whose work holds a place already takes none per attempt. */
  #pipeline<T>(endpoint: CallTarget, idempotent: boolean, hooks: CallHooks, send: Send<T>): Promise<Outcome<T>> {
    const limited = throttled(this.#budgetsFor, this.#refusedBy, throttled(this.#windowsFor, this.#refusedBy, send));
    const retry = { policy: this.retry, logger: this.logger, endpoint, idempotent, priority: hooks.priority ?? PRIORITY.write, signal: hooks.stopSignal };
    return retrying(retry, hooks.place ? limited : inPlace(this.#takePlace, limited));
  }

  readonly #takePlace: TakePlace = (priority, endpoint, work) => {
    const place = () => this.#slots.add(work, { priority: -priority });
    const lane = laneOf(endpoint);
    if (lane === 'general') return place();
    return (lane === 'create' ? this.#creating : this.#logging).add(place, { priority: -priority });
  };

  /** This process's budgets for a call: the rule of its own (creating calls', the logs') first. */
  readonly #budgetsFor = (endpoint: CallTarget): Limit[] => this.#budgets[laneOf(endpoint)];

  /** The company's windows (--coordination), asked last, right before sending. */
  readonly #windowsFor = (endpoint: CallTarget): Limit[] => this.#windows[laneOf(endpoint)];

  /**
   * A creating call's 429 while the general budget had room was the creation rule's; a cache clear's,
   * its environment's (one clear every 10 s): the general budget pausing for it would stop every call.
   * A log read's, likewise, the logs' rule.
   */
  readonly #refusedBy: RefusedBy = (endpoint, slot) => {
    if (!slot.rateLimited) return undefined;
    const room = this.budget?.hasRoom() ?? true;
    if (perEnvironment(endpoint) && room) return 'environment';
    const lane = laneOf(endpoint);
    const own = lane === 'create' ? this.creation : lane === 'logs' ? this.logs : undefined;
    return own && room ? lane : 'general';
  };
}

function budgetLimit(lane: WindowLane, budget: RateBudget): Limit {
  return { lane, take: (signal, priority) => budget.acquire(signal, priority), give: (outcome) => budget.release(outcome) };
}

function windowLimit(lane: WindowLane, window: SharedWindow): Limit {
  return { lane, take: (signal) => window.take(signal), give: (outcome) => window.give(outcome) };
}
