import { backupCreatedMs } from '../api/backup-time.js';
import { sharedStop } from './signals.js';
import { SiteProbe } from '../health/http/probe.js';
import { clearsCache } from '../health/spec.js';
import { stepHealthUrl, type Plan, type Step, type TaskSummary } from '../plan/plan.js';
import { clearCache } from '../run/cache-clear.js';
import { HealthGate } from '../run/health-gate.js';
import { PRIORITY } from '../run/rate-budget.js';
import { updateDatabaseAfterRestore } from '../run/life/database-step.js';
import { followRestore, restoreBroken, type RestoreContext } from '../run/life/restore.js';
import { backupMismatch, type LeftAlone, type RestoreCandidate } from '../run/restore-choice.js';
import type { CacheClear, StepResult } from '../run/types.js';
import { taskWatch, type Watcher } from '../run/watcher.js';
import { systemClock } from '../util/clock.js';
import { siteUserAgent } from '../util/version.js';
import type { Runtime } from './runtime.js';
import type { RunScope } from './run-scope.js';

/** A candidate the service's backup list confirmed, with the backup's age. */
export interface Confirmed extends RestoreCandidate {
  ageMs: number | undefined;
}

type Update = (step: Step, result: StepResult) => Promise<void>;

/**
 * What the restore command works with, as a run does: the rate budget and calls in flight (the
 * runtime), one watcher for the operations, the sites' checks with each task's own `health:`, and
 * Ctrl-C and a lost coordination (no restore starts after either: without the lock, another
 * machine's run may be writing to the same sites).
 */
export class RestoreTools {
  readonly runtime: Runtime;
  readonly #interrupt = sharedStop();
  readonly #watcher: Watcher;
  readonly #sites: SiteProbe | undefined;
  readonly #gates = new Map<number, HealthGate>();
  #lost: Error | undefined;

  /** The scope's runtime, signals and watcher are the tools'; the scope lets go of them, the tools of their own (the site probe). */
  constructor(
    scope: RunScope,
    private readonly plan: Plan,
  ) {
    const { coordination, globals } = scope;
    this.runtime = scope.runtime({ company: plan.company, settings: plan.settings });
    scope.onInterrupt(() => this.#interrupt.abort());
    const stopLost = () => {
      this.#lost = coordination.lost.reason instanceof Error ? coordination.lost.reason : new Error(String(coordination.lost.reason));
      this.#interrupt.abort();
    };
    if (coordination.lost.aborted) stopLost();
    else coordination.lost.addEventListener('abort', stopLost, { once: true });
    this.#watcher = scope.watcher(this.#interrupt.signal);
    this.#sites = plan.tasks.some((t) => t.health) ? new SiteProbe({ userAgent: siteUserAgent(), env: globals.io.env }) : undefined;
  }

  get interrupted(): boolean {
    return this.#interrupt.signal.aborted && this.#lost === undefined;
  }

  /** Why the shared lock and budget can no longer be trusted, if that stopped the restores. */
  get lost(): Error | undefined {
    return this.#lost;
  }

  /**
   * Each candidate's backup, read from the service (one read per environment): still listed, the
   * run's own restore point. And its site, where the task checks one: still broken (a site someone
   * mended since, or a failure written into the journal by hand, is not restored).
   */
  async confirm(candidates: RestoreCandidate[], left: readonly LeftAlone[], runStartedAt: string): Promise<{ todo: Confirmed[]; left: LeftAlone[] }> {
    const todo: Confirmed[] = [];
    const notDone: LeftAlone[] = [...left];
    for (const c of candidates) {
      const list = await this.runtime.caller.read('listBackups', { env_id: c.step.target.env_id! }, undefined, {
        priority: PRIORITY.urgent,
      });
      const backups = list.environment.backups;
      // A backup that is not the run's leaves a broken site so (attention); a site healthy now needs nothing.
      const mismatch = backupMismatch(c, backups, runStartedAt);
      const healthy = mismatch ? undefined : await this.#healthyNow(c.step);
      if (mismatch) notDone.push({ step: c.step, why: mismatch, attention: true });
      else if (healthy) notDone.push({ step: c.step, why: healthy, attention: false });
      else todo.push({ ...c, ageMs: ageOf(backups.find((b) => b.id === c.backupId)!.created_at) });
    }
    return { todo, left: notDone };
  }

  restore(c: RestoreCandidate, update: Update): Promise<StepResult> {
    const { gate, url } = this.#check(c.step);
    return restoreBroken(this.#context(c.step, update), c.step, { ...c.result, restore_point: { tag: c.tag, backup_id: c.backupId } }, gate, url);
  }

  follow(c: RestoreCandidate, update: Update): Promise<StepResult> {
    const { gate, url } = this.#check(c.step);
    return followRestore(this.#context(c.step, update), c.step, c.result, gate, url);
  }

  /**
   * After a restore that moved WordPress back (a core write's), WordPress's database step, as the
   * run's own restores have it (life/database-step.ts): journaled on the write, which stays failed.
   */
  afterRestore(step: Step, restored: StepResult, update: Update): Promise<StepResult> {
    const task = this.plan.tasks.find((t) => t.index === step.task_index)!;
    const context = {
      caller: this.runtime.caller,
      watcher: this.#watcher,
      watch: taskWatch(task, this.runtime.tracking),
      record: update,
      interrupt: this.#interrupt.signal,
    };
    return updateDatabaseAfterRestore(context, task, step, restored);
  }

  async close(): Promise<void> {
    await this.#sites?.close();
  }

  async #healthyNow(step: Step): Promise<string | undefined> {
    const { gate, url } = this.#check(step);
    const now = gate && url ? await gate.check(url) : undefined;
    return now?.healthy ? `its site answers healthy now (${now.detail}): nothing to restore` : undefined;
  }

  #check(step: Step): { gate?: HealthGate; url?: string } {
    const task = this.plan.tasks.find((t) => t.index === step.task_index)!;
    const url = stepHealthUrl(step);
    if (!task.health || !this.#sites || !url) return {};
    let gate = this.#gates.get(task.index);
    if (!gate) this.#gates.set(task.index, (gate = new HealthGate(this.#sites, task.health, systemClock, this.#interrupt.signal)));
    return { gate, url };
  }

  #context(step: Step, update: Update): RestoreContext {
    const task = this.plan.tasks.find((t) => t.index === step.task_index)!;
    return {
      caller: this.runtime.caller,
      watcher: this.#watcher,
      update,
      interrupt: this.#interrupt.signal,
      settings: this.plan.settings.restore,
      watch: taskWatch(task, this.runtime.tracking),
      // The check after the restore sees the page visitors get, as the run's own check does.
      ...(task.health && clearsCache(task.health) ? { clearCache: (s: Step) => this.#clearCache(s, task) } : {}),
    };
  }

  async #clearCache(step: Step, task: TaskSummary): Promise<CacheClear> {
    const context = { caller: this.runtime.caller, watcher: this.#watcher, stopSignal: this.#interrupt.signal, watch: taskWatch(task, this.runtime.tracking) };
    return (await clearCache(context, step.target.env_id!)).clear;
  }
}

function ageOf(created: unknown): number | undefined {
  const at = backupCreatedMs(created);
  return at === undefined ? undefined : Date.now() - at;
}
