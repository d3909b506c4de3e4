import { setMaxListeners } from 'node:events';
import { ACTIONS, restorePoint } from '../actions/index.js';
import type { Logger } from 'pino';
import type { HealthVerdict, SiteProbePort } from '../health/http/probe.js';
import { sleepOn, systemClock, type Clock } from '../util/clock.js';
import { stepHealthUrl, type Plan, type Step, type TaskSummary } from '../plan/plan.js';
import type { CallPort, HeldPlace } from './caller.js';
import type { BusyClaim, BusyRegister } from '../coord/types.js';
import { EnvironmentSequence, type Turn } from './env-sequence.js';
import { failureBudget, type FailureBudget } from './failure-budget.js';
import { afterBackup, findRestorePoint } from './restore-point.js';
import { BatchConfirmer, readListing } from './batch-confirm.js';
import { HealthGate, healthOutcome, healthRecord } from './health-gate.js';
import { heldBefore } from './look-before.js';
import { clearCache } from './cache-clear.js';
import { clearsCache } from '../health/spec.js';
import { OperationFollower, type FollowContext } from './follow.js';
import { PRIORITY } from './rate-budget.js';
import { RunStop } from './run-stop.js';
import { sendStep } from './send-step.js';
import { followRestore, restoreBroken, undoneWrites, type RestoreContext } from './restore.js';
import { countsAgainstBudget, ENDED_STATUSES, type CacheClear, type ExecuteOutcome, type RestorePoint, type RunEvent, type StepResult } from './types.js';
import type { VisualBaseline, VisualPort } from './visual-gate.js';
import { heldText, type VisualSeen } from './visual-outcome.js';
import { verifyTask } from './verify.js';
import { Isolator, type IsolationRun } from './isolation-step.js';
import { ITEM_WRITES } from '../actions/item-writes.js';
import { RunQuarantine } from './run-quarantine.js';
import { isolationLeft } from './resume.js';
import type { ErrorLogLooks } from './error-log.js';
import { DEFAULT_TRACKING, taskWatch, watcherFor, type Watcher, type TrackOptions, type WatchOptions } from './watcher.js';

export interface ExecuteOptions {
  /** Sends every call: it owns the rate budget and the bound on calls in flight. */
  caller: CallPort;
  logger: Logger;
  /** Replaces every task's failure budget (resume --max-failures). @default each task's own */
  overrideMaxFailures?: number | string;
  /** Ctrl-C: start nothing new, let the calls in flight end. */
  signal?: AbortSignal;
  /**
   * The maintenance window closes (its reason, a string, says which): no write starts after it, the
   * steps not sent end `skipped` ("window closed"), and operations already accepted are still
   * followed to their end. @default the run has no window
   */
  closing?: AbortSignal;
  /**
   * When the window closes, by the wall clock, and why: read at the last moment before each attempt
   * leaves, since `closing`'s timer may fire late on a busy machine. @default the run has no window
   */
  closesAt?: { at: number; reason: string };
  /** The shared coordination can no longer be trusted (its reason says why): stop like a 401 (exit 3). */
  lost?: AbortSignal;
  /** Environments busy with other runs' operations (with coordination). @default this run's own turns only */
  busy?: BusyRegister;
  /** Resolves `${VAR}` references left in bodies (secrets) at the moment of sending: the command's environment (app/io.ts). */
  env: Record<string, string | undefined>;
  /** Poll timing; a task's `timeout_ms` overrides `timeoutMs`. @default DEFAULT_TRACKING */
  tracking?: Partial<TrackOptions>;
  /** First wait before re-sending a step whose operation found the environment busy; doubles each time. @default 2000 */
  blockedBackoffMs?: number;
  /** Results known before this execution (resume): those steps are not sent again. */
  initial?: Map<string, StepResult>;
  onEvent?(event: RunEvent): void | Promise<void>;
  /** Called once, before anything is sent, with what a progress line may ask of the run as it goes. */
  onStart?(run: RunLook): void;
  /** Time for polls, waits between waves and backoffs. @default the system clock */
  clock?: Clock;
  /** Fetches sites' pages for tasks with `health:` (never through the API's budget). Required when a task has one. */
  sites?: SiteProbePort;
  /** Screenshots pages for tasks with `health.visual` (app/visual.ts opens the browser). Required when a task has one. */
  visual?: VisualPort;
}

/** What the run can say of itself while it goes (asked by the progress line, never changing anything). */
export interface RunLook {
  /** ms until the run next looks at an operation (a poll, or a listing read that confirms a batch). */
  nextLookMs(): number | undefined;
}

/** What a guarded write carries from before its send to after its operation. */
interface Guarded {
  gate?: HealthGate;
  restore?: RestorePoint;
  before?: HealthVerdict;
  /** `health.visual`: the pages as they looked before the write (taken only of a site healthy then). */
  visual?: VisualBaseline;
  /**
   * `rollout.together`: the write is one of its environment's writes that share one look: the look
   * before is taken once (by the first), and the look after is the group's, once all of them ended.
   */
  grouped?: true;
  /**
   * `rollout.together`, resumed: a write of the group went out before the interruption, so the site
   * as it is now is no baseline (it may be broken by that very write): no look before is taken, and
   * a site broken after the group fails it, as lookAgain does for a lone write.
   */
  noBaseline?: true;
  /** `health.on_broken: isolate`: the site's PHP error log, read before the write, so a fatal error after it names a suspect. */
  log?: ErrorLogLooks;
}

/** `rollout.together`: per environment a joining task writes to in this turn, the writes that share one look: this task's first, then the joined ones. */
function lookGroups(steps: readonly Step[], taskIndex: number): Map<string, Step[]> {
  const envs = new Set(steps.filter((s) => s.joins === taskIndex && s.target.env_id).map((s) => s.target.env_id!));
  const groups = new Map<string, Step[]>();
  for (const s of steps)
    if (s.role !== 'backup' && s.target.env_id !== undefined && envs.has(s.target.env_id))
      groups.set(s.target.env_id, [...(groups.get(s.target.env_id) ?? []), s]);
  return groups;
}

/**
 * Runs a plan's steps: tasks in playbook order (a task's failure budget decides whether the next one
 * starts); within a task, rollout waves in order; a wave's steps all at once, bounded by the Caller's
 * rate budget and calls in flight. A write waits (holding nothing) until its environment's previous
 * operation ended. Accepted operations go to one Watcher. A 401 or a crossed failure budget stops
 * everything; steps not sent end `skipped`.
 */
export function execute(plan: Plan, options: ExecuteOptions): Promise<ExecuteOutcome> {
  return new Execution(plan, options).run();
}

class Execution {
  readonly results: Map<string, StepResult>;
  readonly stop: RunStop;
  readonly watcher: Watcher;
  readonly sequence = new EnvironmentSequence();
  readonly context: FollowContext;
  readonly tracking: TrackOptions;
  /** With coordination: the claims on environments of steps whose operation may still be going, and how long a mark may last. */
  readonly claims = new Map<string, { claim: BusyClaim; forMs: number }>();
  readonly clock: Clock;
  readonly stepsById: Map<string, Step>;
  readonly budgets = new Map<number, FailureBudget>();
  /** What every wait before a send listens on: the run stopping, or its window closing. */
  readonly sends: AbortSignal;
  /** Updates found to break a site in this run (isolation): left out of every write sent after. */
  readonly quarantine = new RunQuarantine();
  /** `health.on_broken: isolate`: takes apart the writes that broke their sites. */
  readonly isolator: Isolator;
  /** Writes a restore undid under isolate, going again (sendAgain), and those that went again already. */
  readonly again: Promise<void>[] = [];
  readonly sentAgain = new Set<string>();

  constructor(
    readonly plan: Plan,
    readonly options: ExecuteOptions,
  ) {
    this.results = new Map(options.initial ?? []);
    this.stepsById = new Map(plan.steps.map((s) => [s.id, s]));
    // A resume sends nowhere what the interrupted run found to break a site.
    for (const [id, known] of this.results) {
      const step = this.stepsById.get(id);
      if (step) this.quarantine.addEnd(step, known);
    }
    this.clock = options.clock ?? systemClock;
    this.stop = new RunStop(options.signal, (reason, kind) => {
      options.logger.warn({ reason }, 'run stopping');
      void options.onEvent?.({ type: 'stopped', kind, reason });
    });
    this.sends = options.closing ? AbortSignal.any([this.stop.signal, options.closing]) : this.stop.signal;
    setMaxListeners(0, this.sends);
    const lost = options.lost;
    if (lost?.aborted) this.stop.stop((lost.reason as Error).message, 'coordination');
    lost?.addEventListener('abort', () => this.stop.stop((lost.reason as Error).message, 'coordination'), { once: true });
    this.tracking = { ...DEFAULT_TRACKING, ...options.tracking };
    this.watcher = watcherFor(options.caller, this.tracking, this.stop.signal, this.clock);
    this.isolator = new Isolator(this.isolationRun());
    this.context = {
      caller: options.caller,
      env: options.env,
      onEvent: options.onEvent?.bind(options),
      mayStillSend: () => !this.sendsOver(),
      watcher: this.watcher,
      stop: this.stop,
      logger: options.logger,
      blockedBackoffMs: options.blockedBackoffMs ?? 2000,
      clock: this.clock,
      update: (step, result) => this.record('update', step, result),
      confirmer: new BatchConfirmer({
        read: (searches, urgent) =>
          readListing({ caller: options.caller, company: plan.company, logger: options.logger }, searches, urgent ? PRIORITY.urgent : PRIORITY.poll),
        model: this.watcher.model,
        clock: this.clock,
        signal: this.stop.signal,
        minGapMs: this.tracking.intervalMs,
      }),
    };
  }

  async run(): Promise<ExecuteOutcome> {
    const confirmer = this.context.confirmer;
    this.options.onStart?.({
      nextLookMs: () => {
        const times = [this.watcher.nextPollIn(), confirmer?.nextReadIn()].filter((t): t is number => t !== undefined);
        return times.length ? Math.min(...times) : undefined;
      },
    });
    if (!this.options.sites && this.plan.tasks.some((t) => t.health)) throw new Error('a task checks sites (health:) but the run was given no site probe');
    if (!this.options.visual && this.plan.tasks.some((t) => t.health?.visual))
      throw new Error('a task looks at pages (health.visual) but the run was given no browser');
    // A step goes in its own task's turn, or (rollout.together) in the turn of the task it joins.
    const stepsByTask = new Map<number, Step[]>();
    for (const step of this.plan.steps) {
      const turn = step.joins ?? step.task_index;
      const list = stepsByTask.get(turn) ?? [];
      list.push(step);
      stepsByTask.set(turn, list);
    }
    for (const task of this.plan.tasks) {
      if (this.sendsOver()) break;
      await this.runTask(task, stepsByTask.get(task.index) ?? []);
    }
    const unsent = this.plan.steps.filter((s) => !this.results.has(s.id));
    // A window that closed after the last send stops nothing: only steps it kept from going do.
    if (!this.stop.reason && unsent.length > 0 && this.windowClosed()) {
      const { closing, closesAt } = this.options;
      this.stop.stop(closing?.aborted ? String(closing.reason as unknown) : closesAt!.reason, 'window');
    }
    if (this.stop.reason) {
      const why = this.stop.reason.kind === 'window' ? `window closed: ${this.stop.reason.reason}` : `not sent: run stopped (${this.stop.reason.reason})`;
      for (const step of unsent) await this.endUnsent(step, 'skipped', why);
    }
    return { results: this.results, stopped: this.stop.reason };
  }

  /** No new write goes out: the run stopped, or its window closed. */
  sendsOver(): boolean {
    return this.stop.stopped || this.windowClosed();
  }

  /** The window closed: its signal says so, or the wall clock has passed its end before the timer could. */
  windowClosed(): boolean {
    const { closing, closesAt } = this.options;
    return closing?.aborted === true || (closesAt !== undefined && Date.now() >= closesAt.at);
  }

  async record(type: 'result' | 'update', step: Step, result: StepResult): Promise<void> {
    this.results.set(step.id, result);
    // A re-send after "blocked" started another operation: the environment is busy with that one now.
    const held = this.claims.get(step.id);
    if (held && type === 'update' && result.status === 'accepted' && result.operation_id) held.claim.started(result.operation_id, held.forMs);
    await this.options.onEvent?.({ type, step, result });
  }

  /** A task's failure budget, made once: a task whose writes joined another's turn counts them there too. */
  budgetOf(task: TaskSummary): FailureBudget {
    let budget = this.budgets.get(task.index);
    if (!budget) {
      // A budget counts targets: a backup that failed is its environment's failure, and its write is not sent.
      const writes = this.plan.steps.filter((s) => s.task_index === task.index && s.role !== 'backup').length;
      budget = failureBudget(this.options.overrideMaxFailures ?? task.max_failures ?? this.plan.settings.max_failures, writes);
      for (const step of this.plan.steps.filter((s) => s.task_index === task.index)) {
        const known = this.results.get(step.id);
        // A write still being isolated has not ended: it counts once its isolation does.
        if (known && known.isolation?.outcome !== 'isolating') this.countFailure(task, budget, known);
      }
      this.budgets.set(task.index, budget);
    }
    return budget;
  }

  /** The task a step belongs to (a joined step runs in another task's turn, under its own task's rules). */
  taskOf(step: Step): TaskSummary {
    return this.plan.tasks.find((t) => t.index === step.task_index)!;
  }

  /** `steps`: those that go in this task's turn, its own and (rollout.together) those that join it. */
  async runTask(task: TaskSummary, steps: Step[]): Promise<void> {
    const budget = this.budgetOf(task);
    // Checks in flight finish when a budget stops the run (whether those sites broke is worth knowing); Ctrl-C ends them.
    const gate = task.health && this.options.sites ? new HealthGate(this.options.sites, task.health, this.clock, this.options.signal) : undefined;
    const waves = [...new Set(steps.map((s) => s.wave ?? 0))].sort((a, b) => a - b);
    for (const [i, wave] of waves.entries()) {
      if (this.sendsOver()) break;
      // A write waits for its restore point's whole step (operation and backup id), not only its operation.
      const backups = new Map<string, Promise<StepResult | undefined>>();
      const inWave = steps.filter((s) => (s.wave ?? 0) === wave);
      const groups = lookGroups(inWave, task.index);
      const grouped = new Set([...groups.values()].flat());
      await Promise.all([
        ...inWave
          .filter((s) => !grouped.has(s))
          .map((step) => {
            const done = step.backup_step
              ? this.guardedStep(task, budget, step, backups.get(step.backup_step), gate)
              : this.runStep(task, budget, step, { gate });
            if (step.role === 'backup')
              backups.set(
                step.id,
                done.then(() => this.results.get(step.id)),
              );
            return done;
          }),
        ...[...groups.values()].map((group) => this.runGroup(task, group, backups, gate)),
      ]);
      // Writes a restore undid under isolate, sent again once their environment's turn came round (sendAgain).
      while (this.again.length > 0) await Promise.all(this.again.splice(0));
      const pause = task.rollout?.pause_ms ?? 0;
      if (!this.sendsOver() && i < waves.length - 1 && pause > 0) {
        this.options.logger.info({ task: task.name, wave, pause_ms: pause }, 'wave done; pausing before the next');
        await sleepOn(this.clock, pause, this.sends);
      }
    }
    if (!this.stop.stopped) {
      for (const [step, result] of await verifyTask(
        ACTIONS.get(task.action)!,
        this.options.caller,
        this.plan.company,
        // Its own steps, wherever they ran (a joined step ran in another task's turn).
        this.plan.steps.filter((s) => s.task_index === task.index),
        this.results,
        task.verify === true,
      ))
        await this.record('update', step, result);
    }
  }

  countFailure(task: TaskSummary, budget: FailureBudget, result: StepResult): void {
    const holdCounts = task.health?.visual?.fail_on_hold === true || result.held?.counts_against_budget === true;
    if (countsAgainstBudget(result.status, holdCounts) && budget.fail()) {
      this.stop.stop(`failure budget exceeded in task "${task.name}": ${budget.describe()}`, 'budget');
    }
  }

  watchOptions(task: TaskSummary, unknownAge = false): WatchOptions {
    return taskWatch(task, this.tracking, unknownAge);
  }

  /** A `backup_first` write: sent only once its restore point is there, and carrying it. */
  async guardedStep(
    task: TaskSummary,
    budget: FailureBudget,
    step: Step,
    backup: Promise<StepResult | undefined> | undefined,
    gate?: HealthGate,
  ): Promise<void> {
    const known = this.results.get(step.id);
    if (known && ENDED_STATUSES.has(known.status)) return this.resumeKnown(task, budget, step, known, { gate, restore: known.restore_point });
    const backupStep = this.stepsById.get(step.backup_step!)!;
    const verdict = afterBackup(await (backup ?? Promise.resolve(this.results.get(backupStep.id))), restorePoint.tagOf(backupStep.body));
    if (this.sendsOver()) return;
    if ('skip' in verdict) return this.endUnsent(step, 'skipped', verdict.skip);
    return this.runStep(task, budget, step, { gate, restore: verdict.restore });
  }

  /** Ends a step that is not sent (its backup failed, or it has no page to check): `skipped` or `failed`, never done. */
  async endUnsent(step: Step, status: 'skipped' | 'failed', reason: string): Promise<void> {
    await this.record('result', step, { step_id: step.id, status, http_status: null, operation_id: null, attempts: 0, error: null, reason });
  }

  /**
   * A write whose site may not be checked (its address is refused) is not sent, as one with no domain
   * to check: `skipped`, or `failed` against the budget with `on_missing_domain: fail`.
   */
  async endRefused(task: TaskSummary, budget: FailureBudget, step: Step, why: string): Promise<void> {
    const fail = task.health?.on_missing_domain === 'fail';
    await this.endUnsent(step, fail ? 'failed' : 'skipped', `${why}; not updated (on_missing_domain: ${fail ? 'fail' : 'skip'})`);
    this.countFailure(task, budget, this.results.get(step.id)!);
  }

  /** One step: wait for its environment, send, and (for a waiting task) follow its operation to the end. */
  async runStep(task: TaskSummary, budget: FailureBudget, planned: Step, guarded: Guarded = {}): Promise<void> {
    const known = this.results.get(planned.id);
    if (known && ENDED_STATUSES.has(known.status)) return this.resumeKnown(task, budget, planned, known, guarded);
    if (this.sendsOver()) return;
    // An update found to break a site earlier in this run goes nowhere else.
    const trimmed = this.quarantine.trim(planned);
    if ('skip' in trimmed) return this.endUnsent(planned, 'skipped', trimmed.skip);
    const step = trimmed.step;
    if (step.health && 'missing' in step.health) {
      await this.endUnsent(step, 'failed', `${step.health.missing} (on_missing_domain: fail)`);
      return this.countFailure(task, budget, this.results.get(step.id)!);
    }
    const release = await this.sequence.enter(step.lock);
    let turn: Turn | undefined;
    try {
      // The baseline: what the site was like before this write, so a site already broken is not blamed on it.
      const url = stepHealthUrl(step);
      // A grouped write after the first shares the first one's look before (rollout.together).
      const looked = guarded.grouped && (guarded.before !== undefined || guarded.noBaseline === true);
      if (url && guarded.gate && !looked) guarded.before = await guarded.gate.check(url);
      if (this.sendsOver()) return;
      if (guarded.before?.refused) return await this.endRefused(task, budget, step, `health: ${guarded.before.detail} at ${url}`);
      // A page not seen healthy before the write gets no write (health.when_broken_before, look-before.ts); a group's first look holds the group.
      const held = heldBefore(step.id, url, guarded.before, task.health);
      if (held) {
        await this.record('result', step, held);
        return this.countFailure(task, budget, held);
      }
      // Pages are looked at only on a site that answers healthy: a broken one has no look to keep.
      if (url && this.options.visual && task.health?.visual && guarded.before?.healthy && !looked && !this.sendsOver())
        guarded.visual = await this.options.visual.before(step.id, url, task.health);
      // Isolation's first suspect is the item a fatal error new since now names: worth a read where there is more than one to choose from.
      if (guarded.before?.healthy && task.health?.on_broken === 'isolate' && (step.updates?.length ?? 0) > 1 && !this.sendsOver()) {
        guarded.log = this.isolator.errorLog(step);
        await guarded.log.before();
      }
      const claim = this.options.busy && step.lock ? await this.claim(this.options.busy, step.lock, task) : undefined;
      if (this.sendsOver()) {
        claim?.ended();
        return;
      }
      let accepted: StepResult | undefined;
      try {
        accepted = await this.options.caller.withPlace(PRIORITY.write, step.endpoint, (place) => this.send(task, budget, step, place, guarded));
      } finally {
        if (!accepted?.operation_id) claim?.ended();
      }
      if (!accepted?.operation_id) return;
      if (claim) {
        const forMs = this.watchOptions(task).timeoutMs;
        claim.started(accepted.operation_id, forMs);
        this.claims.set(step.id, { claim, forMs });
      }
      const follow = this.follower(task, step, accepted, false);
      turn = follow.turn;
      if (task.wait) this.countFailure(task, budget, await this.afterOperation(task, step, await follow.done(), guarded));
    } finally {
      release(turn);
      // A write that never got to its check after (not sent, its operation not followed) lets its browser context go here;
      // a grouped one's is the group's, which lets it go after its look.
      if (!guarded.grouped) void guarded.visual?.close();
    }
  }

  /**
   * `rollout.together`: one environment's writes of this task and of the task that joins it, one
   * after another under one look: the page is looked at before the first, and once after all of them
   * ended (its cache cleared first); a site broken then is restored once, from the shared backup, and
   * every write of the group that did its work is undone with it (undoneWrites).
   */
  async runGroup(task: TaskSummary, group: Step[], backups: Map<string, Promise<StepResult | undefined>>, gate?: HealthGate): Promise<void> {
    const guarded: Guarded = { gate, grouped: true };
    const done: Step[] = [];
    try {
      for (const step of group) {
        const own = this.taskOf(step);
        if (ENDED_STATUSES.has(this.results.get(step.id)?.status ?? 'planned')) guarded.noBaseline = true;
        if (step.backup_step && !ENDED_STATUSES.has(this.results.get(step.id)?.status ?? 'planned')) {
          const backupStep = this.stepsById.get(step.backup_step)!;
          const backup = await (backups.get(step.backup_step) ?? Promise.resolve(this.results.get(backupStep.id)));
          const verdict = afterBackup(backup, restorePoint.tagOf(backupStep.body));
          if (this.sendsOver()) break;
          if ('skip' in verdict) {
            await this.endUnsent(step, 'skipped', verdict.skip);
            continue;
          }
          guarded.restore = verdict.restore;
        }
        await this.runStep(own, this.budgetOf(own), step, guarded);
        if (this.results.get(step.id)?.status === 'succeeded') done.push(step);
      }
      await this.lookAfterGroup(task, done, guarded);
    } finally {
      void guarded.visual?.close();
    }
  }

  /** The group's one look after, taken for its last write that did its work; what it found goes on each of them. */
  async lookAfterGroup(task: TaskSummary, done: Step[], guarded: Guarded): Promise<void> {
    const last = done.at(-1);
    const url = last && stepHealthUrl(last);
    if (!last || !url || !guarded.gate) return;
    const own = this.taskOf(last);
    const after = await this.lookAfter(own, last, this.results.get(last.id)!, { ...guarded, gate: guarded.gate, grouped: undefined }, url);
    this.countFailure(own, this.budgetOf(own), after);
    for (const step of done.slice(0, -1)) {
      const now = this.results.get(step.id)!;
      // Undone by the group's restore (undoneWrites said so), or its own look happened after all (a resume).
      if (now.status !== 'succeeded' || now.health) continue;
      const verdict =
        after.status === 'succeeded' || after.restored ? {} : { status: after.status, reason: after.reason, ...(after.held ? { held: after.held } : {}) };
      const shared: StepResult = { ...now, ...(after.health ? { health: after.health } : {}), ...verdict };
      await this.record('update', step, shared);
      this.countFailure(this.taskOf(step), this.budgetOf(this.taskOf(step)), shared);
    }
  }

  /**
   * What follows a step's operation: a restore point's backup id, or a guarded write's health check.
   * A site broken by the write fails the step; one broken before it is listed, not blamed.
   */
  async afterOperation(task: TaskSummary, step: Step, final: StepResult, guarded: Guarded): Promise<StepResult> {
    if (step.role === 'backup' && final.status === 'succeeded') {
      const found = await findRestorePoint(this.options.caller, step, this.options.logger);
      const result = { ...final, restore_point: found.point };
      await this.record('update', step, result);
      if (found.stop) this.stop.stop(found.stop.reason, found.stop.kind);
      return result;
    }
    // A write sent again after "busy" has its answer from that send: it keeps its restore point.
    const result = guarded.restore && !final.restore_point ? { ...final, restore_point: guarded.restore } : final;
    const url = stepHealthUrl(step);
    // A grouped write is looked at with its group, once all of it ended (runGroup).
    if (url && guarded.gate && !guarded.grouped) return this.lookAfter(task, step, result, { ...guarded, gate: guarded.gate }, url, final);
    if (result !== final) await this.record('update', step, result);
    return result;
  }

  /**
   * The look after a guarded write: its cache cleared, its page checked (and compared), and a site
   * broken by it restored; what was seen is recorded on the step.
   */
  async lookAfter(task: TaskSummary, step: Step, sent: StepResult, guarded: Guarded & { gate: HealthGate }, url: string, final = sent): Promise<StepResult> {
    let result = sent;
    const looks = sent.status === 'succeeded' && !this.stop.stopped;
    // Before any look after the write: a page an edge cache or CDN kept from before it is not what visitors will get.
    const cache = looks && clearsCache(task.health!) ? await this.clearCache(task, step) : undefined;
    const after = looks && !this.stop.stopped ? await guarded.gate.check(url) : undefined;
    const { failsStep, holdsStep } = healthOutcome(guarded.before, after, cache);
    result = {
      ...result,
      health: healthRecord(url, guarded.before, after, cache),
      ...(failsStep ? { status: 'failed' as const, reason: `health: ${after!.detail} at ${url}` } : {}),
      ...(holdsStep ? cacheHeld(url, cache!) : {}),
    };
    // The pages are compared only when the site still answers healthy (a failed check said it all),
    // and only when the cache was cleared: a kept page would look the same as before the write.
    const seen =
      !failsStep && !holdsStep && after?.healthy && guarded.visual ? await this.options.visual!.after(step.id, guarded.visual, task.health!) : undefined;
    if (seen) result = withVisual(result, seen);
    // Broken by this write, and seen healthy just before it: put back from this run's restore point.
    if ((failsStep || seen?.broken) && guarded.before?.healthy && task.health?.on_broken !== undefined) {
      // What the site itself said as it broke, read before it is put back.
      const logged = guarded.log ? await guarded.log.after() : undefined;
      if (logged) result = { ...result, logged };
      await this.record('update', step, result);
      const restored = await restoreBroken(this.restoring(task), step, result, guarded.gate, url);
      const undone = undoneWrites(this.plan.steps, this.results, step, restored);
      for (const [other, was] of undone) await this.record('update', other, was);
      const ended = await this.isolator.afterRestore(task, step, restored, guarded, url);
      if (ended.isolation?.outcome === 'found')
        this.sendAgain(
          step,
          undone.map(([other]) => other),
          guarded,
        );
      return ended;
    }
    if (result !== final) await this.record('update', step, result);
    return result;
  }

  /**
   * `health.on_broken: isolate` on pinned updates (one item a write): the restore that put back the
   * culprit's write undid the writes before it on the environment, each seen healthy after its own
   * write. Isolate keeps every other update, so each goes again, under the task's guards, once the
   * environment's turn comes round; once only (a write undone again stays undone, saying so).
   */
  sendAgain(culprit: Step, undone: readonly Step[], guarded: Guarded): void {
    for (const step of undone) {
      const kind = ACTIONS.get(step.action)?.items;
      if (this.sentAgain.has(step.id) || !kind || !ITEM_WRITES[kind].pinnedOf(step.body)) continue;
      this.sentAgain.add(step.id);
      this.results.delete(step.id);
      const note = `sent again: the restore that put back ${culprit.precondition ?? culprit.id} undid it`;
      const again = { ...step, note: step.note ? `${note}; ${step.note}` : note };
      this.again.push(this.runStep(this.taskOf(step), this.budgetOf(this.taskOf(step)), again, { gate: guarded.gate, restore: guarded.restore }));
    }
  }

  /** What isolation needs of this run. */
  isolationRun(): IsolationRun {
    return {
      caller: this.options.caller,
      watcher: this.watcher,
      logger: this.options.logger,
      visual: this.options.visual,
      blockedBackoffMs: this.options.blockedBackoffMs ?? 2000,
      watchOptions: (task) => this.watchOptions(task),
      clearCache: (task, step) => this.clearCache(task, step, true),
      restoring: (task) => this.restoring(task),
      record: (step, result) => this.record('update', step, result),
      mayGoOn: () => !this.sendsOver(),
      whyNot: () => (this.stop.reason ? `the run stopped (${this.stop.reason.reason})` : 'the maintenance window closed'),
      sleep: (ms) => sleepOn(this.clock, ms, this.sends),
      stop: (reason, kind) => this.stop.stop(reason, kind),
      quarantine: this.quarantine,
    };
  }

  /**
   * Clears the page cache of a guarded write's environment before the look after it; a 401 on the
   * way stops the run. A clear is a write: none leaves after the window closed (the step is then
   * held, never called healthy), unless it belongs to a restore (`repair`), which only Ctrl-C stops.
   */
  async clearCache(task: TaskSummary, step: Step, repair = false): Promise<CacheClear> {
    const envId = step.target.env_id ?? step.lock;
    if (!envId) return { outcome: 'not cleared', detail: 'the step names no environment whose cache to clear' };
    if (!repair && this.windowClosed()) return { outcome: 'not cleared', detail: 'the maintenance window closed before the cache could be cleared' };
    const stopSignal = repair ? (this.options.signal ?? new AbortController().signal) : this.sends;
    const { clear, stop } = await clearCache({ caller: this.options.caller, watcher: this.watcher, stopSignal, watch: this.watchOptions(task) }, envId);
    if (stop) this.stop.stop(stop.reason, stop.kind);
    return clear;
  }

  /** What a restore of an environment of this task needs: it is a repair, so only Ctrl-C keeps one from going. */
  restoring(task: TaskSummary): RestoreContext {
    return {
      caller: this.options.caller,
      watcher: this.watcher,
      update: (s, r) => this.record('update', s, r),
      interrupt: this.options.signal,
      settings: this.plan.settings.restore,
      watch: this.watchOptions(task),
      ...(task.health && clearsCache(task.health) ? { clearCache: (s: Step) => this.clearCache(task, s, true) } : {}),
    };
  }

  /**
   * Claims an environment from other runs (with coordination): waits while another run's operation
   * there is going, following it as this run follows its own. A claim that fails stops the run: a
   * write without it could land on a busy environment.
   */
  async claim(busy: BusyRegister, env: string, task: TaskSummary): Promise<BusyClaim | undefined> {
    try {
      return await busy.claim(env, this.stop.signal, async (operationId) => {
        const watch = this.watcher.watch(operationId, 'another run', this.watchOptions(task, true));
        watch.expedite(); // a write waits on it
        await watch.done;
      });
    } catch (error) {
      // Usually the run stopping, or Redis lost (which stops it); anything else stops it too.
      this.stop.stop(`could not claim environment ${env} from other runs: ${(error as Error).message}`, 'coordination');
      return undefined;
    }
  }

  /** Sends a step and records its answer; returns the result when it started an operation. */
  async send(task: TaskSummary, budget: FailureBudget, step: Step, place: HeldPlace, guarded: Guarded): Promise<StepResult | undefined> {
    if (this.sendsOver()) return undefined;
    const sent = await sendStep(step, this.context, this.sends, place);
    const { stopRun } = sent;
    const result: StepResult = guarded.restore ? { ...sent.result, restore_point: guarded.restore } : sent.result;
    if (result.attempts === 0 && this.sendsOver()) return undefined; // never sent: ends skipped below
    await this.record('result', step, result);
    if (stopRun) return void this.stop.stop(result.reason!, stopRun);
    if (result.status === 'accepted') return result;
    this.countFailure(task, budget, result);
    return undefined;
  }

  /** Resume: an operation accepted before the interruption is followed when its task waits, or when its environment is needed. */
  async resumeKnown(task: TaskSummary, budget: FailureBudget, step: Step, known: StepResult, guarded: Guarded): Promise<void> {
    const url = stepHealthUrl(step);
    if (known.restored?.status === 'accepted' && known.restored.operation_id) {
      // The restore holds its environment as a write does: another write there waits for it to end, never
      // racing it into "blocked by another process" (as a run holds it through its own restore).
      const release = await this.sequence.enter(step.lock);
      try {
        const restored = await followRestore(this.restoring(task), step, known, guarded.gate, url);
        for (const [other, undone] of undoneWrites(this.plan.steps, this.results, step, restored)) await this.record('update', other, undone);
        if (guarded.gate && url) await this.isolator.afterRestore(task, step, restored, { ...guarded, gate: guarded.gate }, url);
      } finally {
        release();
      }
      return;
    }
    if (guarded.gate && url && task.health?.on_broken === 'isolate' && isolationLeft(step, known))
      return this.resumeIsolation(task, budget, step, known, guarded.gate, url);
    if (known.status === 'succeeded' && !known.health && stepHealthUrl(step) && guarded.gate && task.wait)
      return this.lookAgain(task, budget, step, known, guarded);
    if (known.status !== 'accepted' || !known.operation_id) return;
    const release = await this.sequence.enter(step.lock);
    const follow = this.follower(task, step, known, true);
    release(follow.turn);
    // No baseline survives an interruption: a site broken after the operation fails the step.
    if (task.wait) this.countFailure(task, budget, await this.afterOperation(task, step, await follow.done(), guarded));
  }

  /** Resume: isolation the interrupted run left under way (or never began after its restore) goes on, holding the environment. */
  async resumeIsolation(task: TaskSummary, budget: FailureBudget, step: Step, known: StepResult, gate: HealthGate, url: string): Promise<void> {
    if (this.sendsOver()) return;
    const release = await this.sequence.enter(step.lock);
    try {
      const ended = known.isolation
        ? await this.isolator.rounds(task, step, known, { gate }, url)
        : await this.isolator.afterRestore(task, step, known, { gate }, url);
      // Not counted as the budget was built while it was under way (budgetOf): counted now that it ended.
      if (known.isolation && ended.isolation?.outcome !== 'isolating') this.countFailure(task, budget, ended);
    } finally {
      release();
    }
  }

  /**
   * Resume: a guarded write whose operation was journaled as succeeded, and whose look after never
   * ran (the process died between the two, or while its cache was being cleared): the look after
   * runs now, cache clear first, holding the environment. Left alone, the step would read as done
   * with no one having looked at its site. No baseline survives the interruption: a site broken now
   * fails the step.
   */
  async lookAgain(task: TaskSummary, budget: FailureBudget, step: Step, known: StepResult, guarded: Guarded): Promise<void> {
    if (this.sendsOver()) return;
    const release = await this.sequence.enter(step.lock);
    try {
      this.countFailure(task, budget, await this.afterOperation(task, step, known, guarded));
    } finally {
      release();
    }
  }

  /**
   * The operation of an accepted step, as a turn of its environment. A waiting task follows it at
   * once; otherwise it is followed only if a later step needs the environment (or never).
   */
  follower(task: TaskSummary, step: Step, accepted: StepResult, unknownAge: boolean): { turn: Turn; done(): Promise<StepResult> } {
    let follower: OperationFollower | undefined;
    const acceptedAt = unknownAge ? undefined : this.clock.now(); // the watcher's clock
    const acceptedWall = unknownAge ? undefined : Date.now(); // the listing's
    const start = () => {
      if (follower) return follower;
      follower = new OperationFollower(this.context, step, accepted, this.watchOptions(task, unknownAge), acceptedAt, acceptedWall);
      void follower.done.then(() => {
        this.claims.get(step.id)?.claim.ended();
        this.claims.delete(step.id);
      });
      return follower;
    };
    const turn: Turn = {
      whenFree: () => start().done.then(() => undefined),
      expedite: () => start().expedite(),
    };
    return { turn, done: () => start().done };
  }
}

/**
 * A guarded write whose page cache could not be cleared, and whose site answered healthy after it:
 * held, not succeeded. The page checked may be the one a cache kept from before the write, so no one
 * has seen what visitors will get; a site owner would rather look (or be told the rollout stopped)
 * than read "healthy" about a page nobody saw. Not failed either: nothing says the write broke the
 * site, and a failed step would be restored (`on_broken: restore`), losing what changed since its
 * backup. It counts against the failure budget (CacheHeldReason), so a service that cannot clear
 * caches stops a rollout at its budget instead of updating the whole fleet unseen.
 */
function cacheHeld(url: string, cache: CacheClear): Pick<StepResult, 'status' | 'held' | 'reason'> {
  const detail = cache.detail ?? 'not cleared';
  return {
    status: 'held',
    held: {
      code: 'cache_not_cleared',
      url,
      detail,
      override: "clear the site's cache and look at its page: the check saw one that may be from before the write",
      counts_against_budget: true,
    },
    reason: `cache_not_cleared: the page cache was not cleared (${detail}), so the healthy page seen at ${url} may be the one kept from before the write`,
  };
}

/** A step's result with what its pages showed: failed when one is broken, held when one changed. */
function withVisual(result: StepResult, seen: VisualSeen): StepResult {
  if (seen.broken) return { ...result, visual: seen.record, status: 'failed', reason: seen.broken };
  if (seen.held) {
    const page = seen.record.pages.find((p) => p.url === seen.held!.url);
    return { ...result, visual: seen.record, status: 'held', held: seen.held, reason: heldText(seen.held, page) };
  }
  return { ...result, visual: seen.record };
}
