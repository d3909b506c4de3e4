import type { ServiceRule } from '../api/endpoints.js';
import type { FirstSeen, Sighting } from '../inventory/first-seen.js';
import type { StagingEntry, StagingTable } from '../inventory/staging-table.js';
import type { QuarantineEntry, QuarantineTable } from '../inventory/quarantine-table.js';
import type { RetryEntry, RetryTable } from '../inventory/retry-table.js';

/**
 * What runs of one company share, whichever machine they run on: the run lock, the API's rate budget,
 * the environments busy with an operation, and when each theme version was first seen. Without `--coordination` each is the process's own
 * (a lock file, the in-process budget, the run's own environment turns); with Redis they are shared
 * by every process that names the same Redis. The run itself only sees these interfaces.
 */

/** Who holds a lock: enough for a person to find the run (and to tell a dead one). */
export interface LockHolder {
  pid: number;
  host: string;
  started_at: string;
  command: string;
  /** The playbook's name, when the lock is one playbook's (`lock: playbook`). */
  playbook?: string;
}

/** `settings.lock`: one run per company (default), or one per playbook name per company. */
export type LockScopeKind = 'company' | 'playbook';

export interface LockScope {
  company: string;
  kind: LockScopeKind;
  /** The playbook's name, for `playbook` scope. */
  playbook?: string;
}

export interface LockOptions {
  command: string;
  /** Wait for the holder to let go instead of failing with LockedError. */
  wait?: boolean;
  /** Takeovers and waiting, said to the user. */
  onNote?: (text: string) => void;
  signal?: AbortSignal;
}

export interface HeldLock {
  /** Where the lock lives, for messages: a file path or a Redis key. */
  readonly where: string;
  release(): Promise<void>;
}

/** The outcome of one call, as the budget needs it. */
export interface SlotOutcome {
  /** The server refused it with 429 (and did not count it). */
  rateLimited?: boolean;
  retryAfterMs?: number;
  /**
   * The server did not count it under this rule, and it teaches the rule nothing: the run stopped
   * before it went out, or another rule refused it (a creating call over the creation limit).
   */
  notSent?: boolean;
}

/**
 * The rate budget every process of a company draws from: a sliding window of slots, each held from
 * sending until one period after the answer. What a 429 teaches (a lower limit, a pause) is shared.
 */
export interface SharedWindow {
  /** Waits for a slot in the shared window; throws when `signal` aborts or the coordination is lost. */
  take(signal?: AbortSignal): Promise<void>;
  /** Gives back one slot taken by this process (any: this process's slots are interchangeable). */
  give(outcome: SlotOutcome): void;
  /** How long the shared pause (a 429's Retry-After seen by any process) still lasts, as last seen. */
  pausedForMs(): number;
}

/** A write's claim on its environment, held until the operation it starts has ended. */
export interface BusyClaim {
  /**
   * The call was accepted: the environment is busy with this operation until it ends, or at most
   * `forMs` (the task's wait timeout: after it, a run would not wait for the operation either).
   */
  started(operationId: string, forMs: number): void;
  /** The operation ended, or the call started none: the environment is free for other runs. */
  ended(): void;
}

/**
 * Environments busy with an operation from any run. A run claims an environment before each write;
 * the claim waits while another run's operation there is in progress (`waitFor` follows it, as a run
 * follows its own), so the service never fails a write as "blocked by another process".
 */
export interface BusyRegister {
  claim(env: string, signal: AbortSignal, waitFor: (operationId: string) => Promise<void>): Promise<BusyClaim>;
}

/** The service's rules a call may count against (api/endpoints.ts `laneOf`): every call, and creating calls and log reads apart. */
export type WindowLane = ServiceRule;

/**
 * What staging environments ran of each theme version (inventory/staging-table.ts): in the state folder, or
 * in Redis. Sightings are recorded before a plan is made; each staging step's end after it ran.
 */
export interface StagingStore {
  /** Where it lives, for messages: a file path or a Redis key. */
  readonly where: string;
  /** Adds `entries`, durably (none: only reads), and returns the company's whole table as it stands after. */
  record(entries: readonly StagingEntry[]): Promise<StagingTable>;
}

/**
 * Item versions that broke a site, quarantined for the whole company (inventory/quarantine-table.ts):
 * in the state folder, or in Redis. Breaks are recorded after a run's steps end; releases by a person.
 */
export interface QuarantineStore {
  readonly where: string;
  /** Adds `entries` (breaks, releases), durably (none: only reads), and returns the company's whole table as it stands after. */
  record(entries: readonly QuarantineEntry[]): Promise<QuarantineTable>;
}

/** Writes that failed for a reason that may pass, waiting to be tried again (inventory/retry-table.ts): in the state folder, or in Redis. */
export interface RetryStore {
  readonly where: string;
  /** Adds `entries` (failures, clears), durably (none: only reads), and returns the company's whole table as it stands after. */
  record(entries: readonly RetryEntry[]): Promise<RetryTable>;
}

/**
 * When each theme version of a company was first seen (inventory/first-seen.ts): in the state folder,
 * or in Redis, shared by every machine that names it. Written before a plan is made, so before any
 * write is sent: a run that crashes later has still started its versions' clocks.
 */
export interface FirstSeenStore {
  /** Where it lives, for messages: a file path or a Redis key. */
  readonly where: string;
  /**
   * Adds the sightings not known yet, at `at`, durably, and never moves a known time later (of two
   * times the earlier stays). Returns the company's whole table as it stands after.
   */
  record(sightings: readonly Sighting[], at: number): Promise<FirstSeen>;
}

export interface Coordination {
  /** The Redis address, without a password; undefined when nothing is shared beyond this machine. */
  readonly address?: string;
  /** Aborted, with an Error as reason, once the shared state can no longer be trusted (Redis gone, lock lost). */
  readonly lost: AbortSignal;
  lock(scope: LockScope, options: LockOptions): Promise<HeldLock>;
  /**
   * The company's shared window, or undefined when this process's own budget is the whole of it.
   * `lane` names the rule: every call's general window, or the one of creating calls.
   */
  sharedWindow(company: string, limit: number, periodMs: number, lane?: WindowLane): SharedWindow | undefined;
  /** The busy register of one run (its claims are recognised as its own), or undefined when the run's own turns are the whole of it. */
  busy(company: string, runId: string): BusyRegister | undefined;
  /** The company's first-seen times of theme versions (release ages). */
  firstSeen(company: string): FirstSeenStore;
  /** What the company's staging environments ran of each theme version, and which failed (rollout.staging_first). */
  staging(company: string): StagingStore;
  /** The company's quarantined item versions (a version that broke a site is sent nowhere until released). */
  quarantine(company: string): QuarantineStore;
  /** The company's writes waiting to be tried again (`retry_later`). */
  retries(company: string): RetryStore;
  close(): Promise<void>;
}
