import { setMaxListeners } from 'node:events';
import { ACTIONS, restorePoint } from '../actions/index.js';
import type { Logger } from 'pino';
import type { SiteProbePort } from '../health/http/probe.js';
import { sleepOn, systemClock, type Clock } from '../util/clock.js';
import { looksTogether, stepHealthUrl, type Plan, type Step, type TaskSummary } from '../plan/plan.js';
import type { CallPort, HeldPlace } from './caller.js';
import type { BusyClaim, BusyRegister } from '../coord/types.js';
import { EnvironmentSequence, type Turn } from './env-sequence.js';
import { failureBudget, type FailureBudget } from './failure-budget.js';
import { afterBackup } from './restore-point.js';
import { SlotKeeper } from './slot-keeper.js';
import { BatchConfirmer, readListing } from './batch-confirm.js';
import { baselineOf, HealthGate } from './health-gate.js';
import { heldBefore } from './life/look-before.js';
import { OperationFollower, type FollowContext } from './follow.js';
import { PRIORITY } from './rate-budget.js';
import { DEFAULT_FINISH_WITHIN_MS, RunStop } from './run-stop.js';
import { WriteLife, type Guarded, type LifeRun } from './life/write-life.js';
import { parseDuration } from '../util/duration.js';
import { sendStep } from './send-step.js';
import { followRestore, restoreBroken, undoneWrites } from './life/restore.js';
import { countsAgainstBudget, ENDED_STATUSES, isProblem, UNDONE, type BackupSlots, type ExecuteOutcome, type RunEvent, type StepResult } from './types.js';
import type { VisualPort } from './visual-gate.js';
import { verifyTask } from './verify.js';
import { Isolator } from './life/isolation-step.js';
import { ITEM_WRITES } from '../actions/item-writes.js';
import { RunQuarantine } from './run-quarantine.js';
import { databaseLeft } from './life/database-step.js';
import { isolationLeft, lifeAt, lookLeft, restoreLeft, undoLeft } from './life/state.js';
import { DEFAULT_TRACKING, taskWatch, watcherFor, type Watcher, type TrackOptions, type WatchOptions } from './watcher.js';

export interface ExecuteOptions {
  /** Sends every call: it owns the rate budget and the bound on calls in flight. */
  caller: CallPort;
  logger: Logger;
  /** Replaces every task's failure budget (resume --max-failures). @default each task's own */
  overrideMaxFailures?: number | string;
  /** Ctrl-C: start no new write; every write already sent finishes its life (within `settings.finish_within`). */
  signal?: AbortSignal;
  /**
   * The hard stop: started lives stop where they stand, journaled there for `resume`. Its owner may
   * abort it; the run aborts it when `settings.finish_within` ran out after a stop, so what was opened
   * with its signal (the browser's waits) stops with the lives. @default the run's own
   */
  halt?: AbortController;
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
  /** Restore points' room the journal holds (resume): on their records, whether they are sent again or not. */
  room?: ReadonlyMap<string, BackupSlots>;
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

/**
 * Per environment whose writes in this turn share one look, those writes: this task's pinned writes
 * there (one guard per environment, Step.guard_group), then those of a task that joins it (`rollout.together`).
 */
function lookGroups(steps: readonly Step[], taskIndex: number): Map<string, Step[]> {
  const shares = (s: Step) => s.joins === taskIndex || (s.guard_group !== undefined && s.task_index === taskIndex);
  const envs = new Set(steps.filter((s) => shares(s) && s.target.env_id).map((s) => s.target.env_id!));
  const groups = new Map<string, Step[]>();
  for (const s of steps)
    if (s.role !== 'backup' && s.target.env_id !== undefined && envs.has(s.target.env_id))
      groups.set(s.target.env_id, [...(groups.get(s.target.env_id) ?? []), s]);
  return groups;
}

/** A life whose site is being put back: resume goes on with it first, whatever its group. */
const MENDING = new Set(['undoing', 'restoring', 'isolating']);

/**
 * Runs a plan's steps: tasks in playbook order (a task's failure budget decides whether the next one
 * starts); within a task, rollout waves in order; a wave's steps all at once, bounded by the Caller's
 * rate budget and calls in flight. A write waits (holding nothing) until its environment's previous
 * operation ended. Accepted operations go to one Watcher. A stop (a crossed failure budget, the
 * window, the first Ctrl-C) keeps new writes from starting: steps not sent end `skipped`, and every
 * write already sent finishes its life (life/write-life.ts). A halt (a 401, a second Ctrl-C,
 * settings.finish_within run out) stops those lives where they stand, journaled for resume.
 */
export function execute(plan: Plan, options: ExecuteOptions): Promise<ExecuteOutcome> {
  return new Execution(plan, options).run();
}

class Execution implements LifeRun {
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
  /** A guarded write's life after its send (life/write-life.ts): this run schedules it. */
  readonly life: WriteLife;
  /** Writes a restore undid under isolate, going again (sendAgain), and those that went again already. */
  readonly again: Promise<void>[] = [];
  readonly sentAgain = new Set<string>();
  /** Resume: the writes whose cut-short lives finishCutLives took on (their task's turn leaves them alone). */
  readonly finishedFirst = new Set<string>();
  /** Steps whose write was read back already (with their wave): the task's end reads only the rest. */
  readonly readBackDone = new Set<string>();
  /** Writes counted as their site was seen broken (countBreak). */
  readonly countedAtBreak = new Set<string>();
  /** Manual backup slots: room before each backup, restore points removed once judged (slot-keeper.ts). */
  readonly slots: SlotKeeper;

  constructor(
    readonly plan: Plan,
    readonly options: ExecuteOptions,
  ) {
    this.results = new Map(options.initial ?? []);
    this.slots = new SlotKeeper(this, options.room);
    this.stepsById = new Map(plan.steps.map((s) => [s.id, s]));
    // A resume sends nowhere what the interrupted run found to break a site.
    for (const [id, known] of this.results) {
      const step = this.stepsById.get(id);
      if (step) this.quarantine.addEnd(step, known);
    }
    this.clock = options.clock ?? systemClock;
    this.stop = new RunStop(
      options.signal,
      (reason, kind) => {
        options.logger.warn({ reason }, 'run stopping: no new write starts; every write already sent finishes its life');
        void options.onEvent?.({ type: 'stopped', kind, reason });
      },
      {
        finishWithinMs: finishWithinMs(plan),
        clock: this.clock,
        outerHalt: options.halt?.signal,
        onHalt: (why) => {
          options.logger.warn({ why }, 'run halting: started writes stop where they stand (resume finishes them)');
          options.halt?.abort(new Error(why));
        },
      },
    );
    this.sends = options.closing ? AbortSignal.any([this.stop.signal, options.closing]) : this.stop.signal;
    // The window closing is a stop for the lives under way: settings.finish_within bounds them from then.
    options.closing?.addEventListener('abort', () => this.stop.startFinishClock(), { once: true });
    setMaxListeners(0, this.sends);
    const lost = options.lost;
    if (lost?.aborted) this.stop.stop((lost.reason as Error).message, 'coordination');
    lost?.addEventListener('abort', () => this.stop.stop((lost.reason as Error).message, 'coordination'), { once: true });
    this.tracking = { ...DEFAULT_TRACKING, ...options.tracking };
    this.watcher = watcherFor(options.caller, this.tracking, this.stop.halt, this.clock);
    this.life = new WriteLife(this);
    this.isolator = new Isolator(this.life.isolationRun());
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
        // At a stop the listing hands its operations back to polls: the watcher follows a guarded write's on.
        signal: this.stop.signal,
        minGapMs: this.tracking.intervalMs,
      }),
    };
  }

  async run(): Promise<ExecuteOutcome> {
    try {
      return await this.runTasks();
    } finally {
      this.stop.dispose();
    }
  }

  async runTasks(): Promise<ExecuteOutcome> {
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
    // Resume: the lives an interruption cut short finish first, whatever the budget says of new writes.
    await this.finishCutLives();
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
    const closed = closing?.aborted === true || (closesAt !== undefined && Date.now() >= closesAt.at);
    if (closed) this.stop.startFinishClock();
    return closed;
  }

  async record(type: 'result' | 'update', step: Step, given: StepResult): Promise<void> {
    // A restore point's record carries what its room removed from the first (slot-keeper.ts).
    const result = step.endpoint === 'addManualBackup' ? this.slots.withRoom(step, given) : given;
    this.results.set(step.id, result);
    // A re-send after "blocked" started another operation: the environment is busy with that one now.
    const held = this.claims.get(step.id);
    if (held && type === 'update' && result.status === 'accepted' && result.operation_id) held.claim.started(result.operation_id, held.forMs);
    await this.options.onEvent?.({ type, step, result });
  }

  async recordRoom(step: Step, slots: BackupSlots): Promise<void> {
    await this.options.onEvent?.({ type: 'room', step, slots });
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
        // ... and so does a write held for a look a halt kept from happening: its look, on resume, decides.
        // Lives left under way count as they end (resume finishes them), never twice.
        // ... and a write undone for another's sake (undoneWrites, a guard group's put-back) counted nowhere in its run either.
        const undone = known?.reason?.startsWith(UNDONE) === true;
        if (known && !undone && known.isolation?.outcome !== 'isolating' && !lookLeft(known) && !undoLeft(known) && !databaseLeft(known))
          this.countFailure(task, budget, known);
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
    // A check belongs to a started life: it goes on after a stop, and ends only with a halt.
    const gate = task.health && this.options.sites ? new HealthGate(this.options.sites, task.health, this.clock, this.stop.halt) : undefined;
    const waves = [...new Set(steps.map((s) => s.wave ?? 0))].sort((a, b) => a - b);
    for (const [i, wave] of waves.entries()) {
      if (this.sendsOver()) break;
      // A write waits for its restore point's whole step (operation and backup id), not only its operation.
      const backups = new Map<string, Promise<StepResult | undefined>>();
      const inWave = steps.filter((s) => (s.wave ?? 0) === wave);
      // Room for the wave's manual backups first, each in its environment's turn (slot-keeper.ts).
      await this.slots.beforeWave(task, inWave);
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
      // Read back before the next wave: a write whose version did not move fails now, against its budget (the canary stops the rollout).
      await this.readBack(inWave);
      const pause = task.rollout?.pause_ms ?? 0;
      if (!this.sendsOver() && i < waves.length - 1 && pause > 0) {
        this.options.logger.info({ task: task.name, wave, pause_ms: pause }, 'wave done; pausing before the next');
        await sleepOn(this.clock, pause, this.sends);
      }
    }
    // Its own steps, wherever they ran (a joined step ran in another task's turn), and not read back with their wave.
    await this.readBack(this.plan.steps.filter((s) => s.task_index === task.index));
    // Its restore points judged healthy go; `keep` keeps the newest.
    await this.slots.afterTask(task);
  }

  /**
   * The read-back of a life: what the environments run after the writes, read once for the steps given
   * (a wave's, or what is left of a task's), each judged by its own task's action; a write that runs
   * another version than was sent fails here and counts against its task's budget. A step is read back
   * once. A halted run reads nothing: its lives stopped where they stand.
   */
  async readBack(steps: readonly Step[]): Promise<void> {
    if (this.stop.halted) return;
    const left = steps.filter((s) => !this.readBackDone.has(s.id));
    for (const task of this.plan.tasks) {
      const own = left.filter((s) => s.task_index === task.index);
      if (own.length === 0) continue;
      const judged = await verifyTask(ACTIONS.get(task.action)!, this.options.caller, this.plan.company, own, this.results, task.verify === true);
      // A write not ended (accepted, not waited for) is read back later: only those whose operation ended were judged.
      for (const s of own) if (this.results.get(s.id)?.status !== 'accepted') this.readBackDone.add(s.id);
      // A held write was counted as it was held (or not, by its task's rule): only a write seen done counts now.
      const wasDone = new Map(judged.map(([step]) => [step.id, !isProblem(this.results.get(step.id)!.status)]));
      // Recorded together: the journal writes them in this order with one sync, where one sync each
      // (a few ms) kept a night of 500 environments' 4,600 writes seconds from its next call.
      await Promise.all(judged.map(([step, result]) => this.record('update', step, result)));
      for (const [step, result] of judged)
        if ((result.status === 'failed' || result.status === 'held') && wasDone.get(step.id)) this.countFailure(task, this.budgetOf(task), result);
    }
  }

  /**
   * A write seen breaking its site counts against its task's budget then, before its restore and
   * isolation (minutes, on the real service): a stop keeps new writes from starting while those finish.
   * It is not counted again as its life ends, whatever isolation finds.
   */
  countBreak(task: TaskSummary, result: StepResult): void {
    this.countFailure(task, this.budgetOf(task), result);
    this.countedAtBreak.add(result.step_id);
  }

  countFailure(task: TaskSummary, budget: FailureBudget, result: StepResult): void {
    if (this.countedAtBreak.has(result.step_id)) return;
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
    if (this.finishedFirst.has(step.id)) return;
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

  /**
   * Resume: every write the interrupted run sent and whose life it did not end (an operation to
   * follow, a look after, a restore, isolation rounds) goes on now, before any new write and before
   * a crossed budget is honoured: a site left mid-restore or unchecked is worse than one not updated.
   * Writes looked at together (rollout.together) finish in their group's turn. A guard group whose
   * isolation had ended was settled before (planResume: a kill may have come between), so the budgets
   * the cut lives rebuild (budgetOf) count each write by what became of it.
   */
  async finishCutLives(): Promise<void> {
    const gates = new Map<number, HealthGate | undefined>();
    const gateOf = (task: TaskSummary) => {
      if (!gates.has(task.index))
        gates.set(task.index, task.health && this.options.sites ? new HealthGate(this.options.sites, task.health, this.clock, this.stop.halt) : undefined);
      return gates.get(task.index);
    };
    const cut = this.plan.steps.filter((step) => {
      const known = this.options.initial?.get(step.id);
      const at = known === undefined ? 'ended' : lifeAt(this.taskOf(step), step, known);
      // A guard group's site left broken (its put-back, restore or isolation under way) is mended first, as a lone write's.
      const mending = step.guard_group !== undefined && step.joins === undefined && MENDING.has(at);
      return at !== 'ended' && (!this.grouped(step) || mending);
    });
    await Promise.all(
      cut.map((step) => {
        const task = this.taskOf(step);
        this.finishedFirst.add(step.id);
        return this.resumeKnown(task, this.budgetOf(task), step, this.results.get(step.id)!, {
          gate: gateOf(task),
          restore: this.results.get(step.id)!.restore_point,
        });
      }),
    );
  }

  /** `rollout.together`: the step is looked at with its environment's other writes. */
  grouped(step: Step): boolean {
    return looksTogether(this.plan.steps, step);
  }

  /** One step: wait for its environment, send, and (for a waiting task) follow its operation to the end. */
  async runStep(task: TaskSummary, budget: FailureBudget, planned: Step, guarded: Guarded = {}): Promise<void> {
    if (this.finishedFirst.has(planned.id)) return;
    const known = this.results.get(planned.id);
    if (known && ENDED_STATUSES.has(known.status)) return this.resumeKnown(task, budget, planned, known, guarded);
    if (this.sendsOver()) return;
    // An update found to break a site earlier in this run goes nowhere else.
    const trimmed = this.quarantine.trim(planned);
    if ('skip' in trimmed) return this.endUnsent(planned, 'skipped', trimmed.skip);
    let step = trimmed.step;
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
      // A page not seen healthy before the write gets no write (health.when_broken_before, life/look-before.ts); a group's first look holds the group.
      const held = heldBefore(step.id, url, guarded.before, task.health);
      if (held) {
        await this.record('result', step, held);
        return this.countFailure(task, budget, held);
      }
      // Pages are looked at only on a site that answers healthy: a broken one has no look to keep.
      if (url && this.options.visual && task.health?.visual && guarded.before?.healthy && !looked && !this.sendsOver())
        guarded.visual = await this.options.visual.before(step.id, url, task.health);
      // Isolation's first suspect is the item a fatal error new since now names: worth a read where there is more than one to choose from.
      // A guard group's first write reads it for the group (one guard per environment: its items are isolated together).
      const many = (step.updates?.length ?? 0) > 1 || (step.guard_group !== undefined && !looked);
      if (guarded.before?.healthy && task.health?.on_broken === 'isolate' && many && !guarded.log && !this.sendsOver()) {
        guarded.log = this.isolator.errorLog(step);
        // A stop while it waits for the logs' rule drops it: the write will not go, and the lives that finish need the rule's slots.
        await guarded.log.before(this.sends);
      }
      if (this.sendsOver()) return;
      const claim = this.options.busy && step.lock ? await this.claim(this.options.busy, step.lock, task) : undefined;
      if (this.sendsOver()) {
        claim?.ended();
        return;
      }
      // Trimmed again at the last moment: another site's isolation may have found a culprit while this write waited its turn and looked.
      const last = this.quarantine.trim(step);
      if ('skip' in last) {
        claim?.ended();
        return await this.endUnsent(step, 'skipped', last.skip);
      }
      const sending = (step = last.step);
      let accepted: StepResult | undefined;
      try {
        accepted = await this.options.caller.withPlace(PRIORITY.write, sending.endpoint, (place) => this.send(task, budget, sending, place, guarded));
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
      if (task.wait) this.countFailure(task, budget, await this.life.afterOperation(task, step, await follow.done(), guarded));
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
        // Finished first by resume (its site mended, finishCutLives): its look was its put-back's.
        if (this.finishedFirst.has(step.id)) continue;
        const own = this.taskOf(step);
        const known = this.results.get(step.id);
        if (known?.held?.code === 'not_looked') {
          // A halt kept the group's look from happening: the write did its work, and the group's look now decides,
          // judged by the look before the halt's record kept (a site broken since is put back).
          await this.record('update', step, lookedFrom(known));
          guarded.before ??= baselineOf(known.health);
        }
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
      await this.life.lookAfterGroup(task, done, guarded);
    } finally {
      void guarded.visual?.close();
    }
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
      // The run stopped (or its window closed) while this write waited for its claim: it is simply not sent.
      // Redis lost, or anything else, halts the run: a write without its claim could land on a busy environment.
      if (this.sendsOver()) return undefined;
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
  async resumeKnown(task: TaskSummary, budget: FailureBudget, step: Step, known: StepResult, given: Guarded): Promise<void> {
    const url = stepHealthUrl(step);
    // The look before the write, as the record a halt left keeps it: a site healthy then and broken now is put back.
    const guarded = given.before ? given : { ...given, before: baselineOf(known.health) };
    // Its items being put back when a halt came: the commands not seen to succeed go again, then the look (and the backup if still broken).
    if (undoLeft(known) && guarded.gate && url) return this.resumeUndo(task, step, known, { ...guarded, gate: guarded.gate }, url);
    if (restoreLeft(known)) {
      // The restore holds its environment as a write does: another write there waits for it to end, never
      // racing it into "blocked by another process" (as a run holds it through its own restore).
      const release = await this.sequence.enter(step.lock);
      try {
        // Accepted: followed to its end. A halt kept it from leaving (not sent): it goes now, the site being broken.
        const restored =
          known.restored!.status === 'accepted'
            ? await followRestore(this.life.restoring(task), step, known, guarded.gate, url)
            : await this.restoreIfBroken(task, step, known, guarded.gate, url);
        for (const [other, undone] of undoneWrites(this.plan.steps, this.results, step, restored)) await this.record('update', other, undone);
        const ended = guarded.gate && url ? await this.isolator.afterRestore(task, step, restored, { ...guarded, gate: guarded.gate }, url) : restored;
        await this.life.databaseAfterLife(task, step, ended);
      } finally {
        release();
      }
      return;
    }
    if (guarded.gate && url && task.health?.on_broken === 'isolate' && isolationLeft(step, known))
      return this.resumeIsolation(task, budget, step, known, guarded.gate, url);
    if (lookLeft(known) && stepHealthUrl(step) && guarded.gate && task.wait) return this.lookAgain(task, budget, step, lookedFrom(known), guarded);
    // A database step a crash or halt left (sending, accepted, not sent): taken on where it stands, holding the environment.
    if (databaseLeft(known) && task.wait) return this.lookAgain(task, budget, step, known, guarded);
    if (known.status !== 'accepted' || !known.operation_id) return;
    const release = await this.sequence.enter(step.lock);
    const follow = this.follower(task, step, known, true);
    release(follow.turn);
    // A baseline only where a halt's record kept one (guarded.before): without it a site broken after the operation fails the step.
    if (task.wait) this.countFailure(task, budget, await this.life.afterOperation(task, step, await follow.done(), guarded));
  }

  /** Resume of `undoing`: holds the environment as a write does while its items go back (undo-items.ts). */
  async resumeUndo(task: TaskSummary, step: Step, known: StepResult, guarded: Guarded & { gate: HealthGate }, url: string): Promise<void> {
    const release = await this.sequence.enter(step.lock);
    try {
      await this.life.putBack(task, step, known, guarded, url);
    } finally {
      release();
    }
  }

  /**
   * Resume: a restore a halt kept from leaving goes only to a site still broken. Hours may have passed,
   * and a restore loses what the site did since its backup: one healthy again (mended by hand, or a
   * failure that passed) is left as it is, saying so, as `sitefleet restore` does.
   */
  async restoreIfBroken(task: TaskSummary, step: Step, known: StepResult, gate: HealthGate | undefined, url: string | undefined): Promise<StepResult> {
    const now = gate && url ? await gate.check(url) : undefined;
    if (!now?.healthy) return restoreBroken(this.life.restoring(task), step, known, gate, url);
    const kept: StepResult = {
      ...known,
      restored: { ...known.restored!, health: { outcome: 'healthy', detail: `healthy again at resume (${now.detail}): not restored` } },
    };
    await this.record('update', step, kept);
    return kept;
  }

  /** Resume: isolation the interrupted run left under way (or never began after its restore) goes on, holding the environment. */
  async resumeIsolation(task: TaskSummary, budget: FailureBudget, step: Step, known: StepResult, gate: HealthGate, url: string): Promise<void> {
    if (this.stop.halted) return;
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
   * with no one having looked at its site. A halt's record keeps the look before (resumeKnown): a site
   * broken now is put back; after a crash none survives, and a site broken now fails the step.
   */
  async lookAgain(task: TaskSummary, budget: FailureBudget, step: Step, known: StepResult, guarded: Guarded): Promise<void> {
    if (this.stop.halted) return;
    const release = await this.sequence.enter(step.lock);
    try {
      this.countFailure(task, budget, await this.life.afterOperation(task, step, known, guarded));
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
      // A guarded write's operation is followed on after a stop (its life finishes); another's is let go (status --wait finds it).
      const guarded = task.health !== undefined && step.role !== 'backup';
      const watch = { ...this.watchOptions(task, unknownAge), ...(guarded ? {} : { until: this.stop.signal }) };
      follower = new OperationFollower(this.context, step, accepted, watch, acceptedAt, acceptedWall);
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

/** `settings.finish_within` in ms, else the default: how long started lives may take after a stop. */
function finishWithinMs(plan: Plan): number {
  const text = plan.settings.finish_within;
  return (text === undefined ? undefined : parseDuration(text)) ?? DEFAULT_FINISH_WITHIN_MS;
}

/** A write held for a look a halt kept from happening, as it stood before the hold: the look now decides. */
function lookedFrom(known: StepResult): StepResult {
  if (known.held?.code !== 'not_looked') return known;
  const { held: _held, ...rest } = known;
  return { ...rest, status: 'succeeded', reason: null };
}
