import type { HealthVerdict } from '../../health/http/probe.js';
import { clearsCache, undoesByItems } from '../../health/spec.js';
import { looksTogether, stepHealthUrl, type Plan, type Step, type TaskSummary } from '../../plan/plan.js';
import { sleepOn, type Clock } from '../../util/clock.js';
import { clearCache } from '../cache-clear.js';
import type { ErrorLogLooks } from '../error-log.js';
import type { Logger } from 'pino';
import type { CallPort } from '../caller.js';
import type { VisualPort } from '../visual-gate.js';
import type { FailureBudget } from '../failure-budget.js';
import { HealthGate, healthOutcome, healthRecord } from '../health-gate.js';
import type { IsolationRun, Isolator } from './isolation-step.js';
import { findRestorePoint } from '../restore-point.js';
import { heldByDatabase, restoreDatabaseLeft, updateDatabase, updateDatabaseAfterRestore, type DatabaseContext } from './database-step.js';
import { restoreBroken, undoneWrites, type RestoreContext } from './restore.js';
import type { RunQuarantine } from '../run-quarantine.js';
import type { RunStop } from '../run-stop.js';
import type { SlotKeeper } from '../slot-keeper.js';
import type { CacheClear, RestorePoint, StepResult } from '../types.js';
import type { VisualBaseline } from '../visual-gate.js';
import { heldText, type VisualSeen } from '../visual-outcome.js';
import type { Watcher, WatchOptions } from '../watcher.js';
import { healthyByItems, undoByItems } from './undo-items.js';
import { restoreLeft, undoLeft } from './state.js';
import { groupMates, matesDone, putBackByFiles } from './guard-group.js';

/** What a guarded write carries from before its send to after its operation. */
/** What a guarded write carries from before its send to after its operation. */
export interface Guarded {
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

/**
 * What a write's life needs of the run that schedules it: the run's calls, watcher, stop and clock,
 * its record of results, and the budget each ended life counts against. The run (executor.ts) is
 * the only implementation; the life never schedules (no waves, no turns, no budgets of its own).
 */
export interface LifeRun {
  readonly plan: Plan;
  /** What the run was given: its calls, its log, its browser (health.visual). */
  readonly options: { caller: CallPort; logger: Logger; visual?: VisualPort; blockedBackoffMs?: number };
  readonly stop: RunStop;
  readonly watcher: Watcher;
  readonly clock: Clock;
  readonly results: Map<string, StepResult>;
  readonly isolator: Isolator;
  readonly quarantine: RunQuarantine;
  /** Manual backup slots: what a backup step's tag carried before it was sent (slot-keeper.ts). */
  readonly slots: Pick<SlotKeeper, 'earlier' | 'port'>;
  record(type: 'result' | 'update', step: Step, result: StepResult): Promise<void>;
  taskOf(step: Step): TaskSummary;
  budgetOf(task: TaskSummary): FailureBudget;
  countFailure(task: TaskSummary, budget: FailureBudget, result: StepResult): void;
  /** A write seen breaking its site: counted now, before its restore and isolation, and not again. */
  countBreak(task: TaskSummary, result: StepResult): void;
  watchOptions(task: TaskSummary, unknownAge?: boolean): WatchOptions;
  /** `health.on_broken: isolate` on pinned updates: the writes a culprit's restore undid go again in their environment's turn. */
  sendAgain(culprit: Step, undone: readonly Step[], guarded: Guarded): void;
}

/**
 * A guarded write's life after its send, state by state (life/state.ts holds the table): its
 * operation's end, the cache cleared, the look after, a restore of a site it broke, isolation. Every
 * move is journaled (`record`) before the next call leaves, so a resume continues from any state.
 * A stop lets every move here go on; only a halt (`stop.halt`) ends one where it stands.
 */
export class WriteLife {
  constructor(private readonly run: LifeRun) {}

  /** The group's one look after, taken for its last write that did its work; what it found goes on each of them. */
  async lookAfterGroup(task: TaskSummary, done: Step[], guarded: Guarded): Promise<void> {
    const last = done.at(-1);
    const url = last && stepHealthUrl(last);
    if (!last || !url || !guarded.gate) return;
    const own = this.run.taskOf(last);
    const after = await this.lookAfter(own, last, this.run.results.get(last.id)!, { ...guarded, gate: guarded.gate, grouped: undefined }, url);
    this.run.countFailure(own, this.run.budgetOf(own), after);
    // A halt left the group's put-back or restore under way: the others wait for it (resume puts them back with it).
    if (undoLeft(after) || restoreLeft(after)) return;
    for (const step of done.slice(0, -1)) {
      const now = this.run.results.get(step.id)!;
      // Undone by the group's restore (undoneWrites said so), or its own look happened after all (a resume).
      if (now.status !== 'succeeded' || now.health) continue;
      const verdict =
        after.status === 'succeeded' || after.restored ? {} : { status: after.status, reason: after.reason, ...(after.held ? { held: after.held } : {}) };
      const shared: StepResult = { ...now, ...(after.health ? { health: after.health } : {}), ...verdict };
      await this.run.record('update', step, shared);
      this.run.countFailure(this.run.taskOf(step), this.run.budgetOf(this.run.taskOf(step)), shared);
    }
    for (const step of done) await this.holdGrouped(step, after);
  }

  /** A write of a group: its database step after the group's restore; held when its database step did not succeed, and counted. */
  private async holdGrouped(step: Step, after: StepResult): Promise<void> {
    const task = this.run.taskOf(step);
    const now = await updateDatabaseAfterRestore(this.databaseContext(task), task, step, this.run.results.get(step.id)!, after);
    const held = heldByDatabase(now);
    if (held === now) return;
    await this.run.record('update', step, held);
    this.run.countFailure(this.run.taskOf(step), this.run.budgetOf(this.run.taskOf(step)), held);
  }

  /**
   * What follows a step's operation: a restore point's backup id, or a guarded write's health check.
   * A site broken by the write fails the step; one broken before it is listed, not blamed.
   */
  async afterOperation(task: TaskSummary, step: Step, operated: StepResult, guarded: Guarded): Promise<StepResult> {
    // Resumed: a database step after a restore is all that is left; the restore's look stands.
    if (restoreDatabaseLeft(operated)) return this.databaseAfterLife(task, step, operated);
    // Before the look: the site is judged as it is once its database step ran (updating_database).
    const ended = await this.afterDatabaseStep(task, step, await updateDatabase(this.databaseContext(task), task, step, operated), guarded);
    // A grouped write is held for its database step once its group was looked at (lookAfterGroup).
    return guarded.grouped ? ended : this.databaseAfterLife(task, step, ended);
  }

  /** The life after the write's operation and its database step: a restore point's id, or the look after. */
  private async afterDatabaseStep(task: TaskSummary, step: Step, final: StepResult, guarded: Guarded): Promise<StepResult> {
    if (step.role === 'backup' && final.status === 'succeeded') {
      const found = await findRestorePoint(this.run.options.caller, step, this.run.options.logger, this.run.slots.earlier(step));
      const result = { ...final, restore_point: found.point };
      await this.run.record('update', step, result);
      if (found.stop) this.run.stop.stop(found.stop.reason, found.stop.kind);
      return result;
    }
    // A write sent again after "busy" has its answer from that send: it keeps its restore point.
    const result = guarded.restore && !final.restore_point ? { ...final, restore_point: guarded.restore } : final;
    const url = stepHealthUrl(step);
    // A grouped write is looked at with its group, once all of it ended (runGroup).
    if (url && guarded.gate && !guarded.grouped) return this.lookAfter(task, step, result, { ...guarded, gate: guarded.gate }, url, final);
    if (result !== final) await this.run.record('update', step, result);
    return result;
  }

  /**
   * The look after a guarded write: its cache cleared, its page checked (and compared), and a site
   * broken by it restored; what was seen is recorded on the step.
   */
  async lookAfter(task: TaskSummary, step: Step, sent: StepResult, guarded: Guarded & { gate: HealthGate }, url: string, final = sent): Promise<StepResult> {
    let result = sent;
    const looks = sent.status === 'succeeded' && !this.run.stop.halted;
    // Before any look after the write: a page an edge cache or CDN kept from before it is not what visitors will get.
    const cache = looks && clearsCache(task.health!) ? await this.clearCache(task, step) : undefined;
    const after = looks && !this.run.stop.halted ? await guarded.gate.check(url) : undefined;
    // A halt came before the look after: nobody saw the site since its write, so it is not done (resume looks).
    if (sent.status === 'succeeded' && !after && this.run.stop.halted) return this.notLooked(step, sent, url, final, guarded.before);
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
      !failsStep && !holdsStep && after?.healthy && guarded.visual ? await this.run.options.visual!.after(step.id, guarded.visual, task.health!) : undefined;
    if (seen) result = withVisual(result, seen);
    // Broken by this write, and seen healthy just before it: put back (its items' files, or this run's restore point).
    if ((failsStep || seen?.broken) && guarded.before?.healthy && task.health?.on_broken !== undefined) return this.putBack(task, step, result, guarded, url);
    if (result !== final) await this.run.record('update', step, result);
    return result;
  }

  /**
   * A site its write broke, put back: by the items' own files first (health.undo: items_first,
   * undo-items.ts), else, or when still broken, from this run's restore point; then isolation. A
   * resume of `undoing` comes here too: the commands already seen to succeed are not sent again.
   */
  async putBack(task: TaskSummary, step: Step, broken: StepResult, guarded: Guarded & { gate: HealthGate }, url: string): Promise<StepResult> {
    // What the site itself said as it broke, read before it is put back.
    const logged = guarded.log ? await guarded.log.after() : undefined;
    const result = logged ? { ...broken, logged } : broken;
    await this.run.record('update', step, result);
    this.run.countBreak(task, result);
    // A guard group's writes (one guard per environment) are put back as one write of all their items (guard-group.ts);
    // writes looked at together with another task's broke the site together: the backup puts them back.
    const mates = groupMates(this.run.plan.steps, step);
    const byItems =
      undoesByItems(task.health!) && (mates || !looksTogether(this.run.plan.steps, step))
        ? await this.undoByItems(task, step, result, guarded.gate, url, mates)
        : result;
    // Healthy again by its items' own files (the site's data kept): no restore; isolation sends them again in rounds, each going back by its files.
    if (healthyByItems(byItems) && task.health?.on_broken === 'isolate') return this.run.isolator.afterRestore(task, step, byItems, guarded, url);
    // ... or a halt came first: a resume goes on.
    if (healthyByItems(byItems) || byItems.undone?.status === 'sending') return byItems;
    const restored = await restoreBroken(this.restoring(task), step, byItems, guarded.gate, url);
    const undone = undoneWrites(this.run.plan.steps, this.run.results, step, restored);
    for (const [other, was] of undone) await this.run.record('update', other, was);
    const ended = await this.run.isolator.afterRestore(task, step, restored, guarded, url);
    // A guard group's mates were isolation's own updates: none goes again on its own.
    if (ended.isolation?.outcome === 'found' && !mates)
      this.run.sendAgain(
        step,
        undone.map(([other]) => other),
        guarded,
      );
    return ended;
  }

  /** The write's items (and a guard group's mates' items) put back by their own files; mates healthy so are told so. */
  private async undoByItems(task: TaskSummary, step: Step, broken: StepResult, gate: HealthGate, url: string, mates: Step[] | undefined): Promise<StepResult> {
    const done = matesDone(mates ?? [], this.run.results);
    const byItems = await undoByItems(this.restoring(task), step, broken, gate, url, done);
    if (healthyByItems(byItems)) for (const mate of done) await this.run.record('update', mate, putBackByFiles(this.run.results.get(mate.id)!, step, byItems));
    return byItems;
  }

  /**
   * A guarded write whose look after a halt kept from happening: held, never succeeded; `resume` looks.
   * Its look before is kept with it (health.before): resume judges the look after by it, and puts back
   * a site the write broke.
   */
  async notLooked(step: Step, sent: StepResult, url: string, final: StepResult, before?: HealthVerdict): Promise<StepResult> {
    const why = String((this.run.stop.halt.reason as Error | undefined)?.message ?? 'the run halted');
    const result: StepResult = {
      ...sent,
      ...(before ? { health: healthRecord(url, before, undefined) } : {}),
      status: 'held',
      held: { code: 'not_looked', url, detail: why, override: 'sitefleet resume clears the cache and looks at the page (or look at it yourself)' },
      reason: `not_looked: the run halted (${why}) before the site was looked at after its write; resume looks at it`,
    };
    if (result !== final) await this.run.record('update', step, result);
    return result;
  }

  /** After a restore that moved WordPress back, its database step; a write whose database step did not succeed is held. */
  async databaseAfterLife(task: TaskSummary, step: Step, ended: StepResult): Promise<StepResult> {
    const held = heldByDatabase(await updateDatabaseAfterRestore(this.databaseContext(task), task, step, ended));
    if (held.status !== ended.status) await this.run.record('update', step, held);
    return held;
  }

  /** What a database step needs of this run: it belongs to a write already sent, so only a halt keeps it from going. */
  private databaseContext(task: TaskSummary): DatabaseContext {
    const { caller } = this.run.options;
    const record = (s: Step, r: StepResult) => this.run.record('update', s, r);
    return { caller, watcher: this.run.watcher, watch: this.run.watchOptions(task), record, interrupt: this.run.stop.halt };
  }

  /** What isolation needs of this run. */
  isolationRun(): IsolationRun {
    return {
      caller: this.run.options.caller,
      watcher: this.run.watcher,
      logger: this.run.options.logger,
      visual: this.run.options.visual,
      blockedBackoffMs: this.run.options.blockedBackoffMs ?? 2000,
      watchOptions: (task) => this.run.watchOptions(task),
      clearCache: (task, step) => this.clearCache(task, step),
      restoring: (task) => this.restoring(task),
      slots: (task) => this.run.slots.port(task),
      record: (step, result) => this.run.record('update', step, result),
      // Rounds are the life of a write already sent: a stop or the window lets them finish; a halt ends them.
      mayGoOn: () => !this.run.stop.halted,
      whyNot: () => `the run halted (${String((this.run.stop.halt.reason as Error | undefined)?.message ?? this.run.stop.reason?.reason)})`,
      sleep: (ms) => sleepOn(this.run.clock, ms, this.run.stop.halt),
      stop: (reason, kind) => this.run.stop.stop(reason, kind),
      quarantine: this.run.quarantine,
      steps: this.run.plan.steps,
      results: this.run.results,
    };
  }

  /**
   * Clears the page cache of a guarded write's environment before the look after it (or after its
   * restore); a 401 on the way stops the run. A clear belongs to a write already sent: a stop or the
   * window closing does not keep it from going, only a halt does (the step is then held, never called healthy).
   */
  async clearCache(task: TaskSummary, step: Step): Promise<CacheClear> {
    const envId = step.target.env_id ?? step.lock;
    if (!envId) return { outcome: 'not cleared', detail: 'the step names no environment whose cache to clear' };
    const stopSignal = this.run.stop.halt;
    const { clear, stop } = await clearCache(
      { caller: this.run.options.caller, watcher: this.run.watcher, stopSignal, watch: this.run.watchOptions(task) },
      envId,
    );
    if (stop) this.run.stop.stop(stop.reason, stop.kind);
    return clear;
  }

  /** What a restore of an environment of this task needs: it is a repair, so only a halt keeps one from going. */
  restoring(task: TaskSummary): RestoreContext {
    return {
      caller: this.run.options.caller,
      watcher: this.run.watcher,
      update: (s, r) => this.run.record('update', s, r),
      interrupt: this.run.stop.halt,
      settings: this.run.plan.settings.restore,
      watch: this.run.watchOptions(task),
      ...(task.health && clearsCache(task.health) ? { clearCache: (s: Step) => this.clearCache(task, s) } : {}),
    };
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
