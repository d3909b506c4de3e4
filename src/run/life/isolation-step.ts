import type { Logger } from 'pino';
import { ACTIONS } from '../../actions/index.js';
import { clearsCache, undoesByItems } from '../../health/spec.js';
import { KIND_TABLE, KINDS, refFrom } from '../../inventory/kinds.js';
import type { Step, TaskSummary } from '../../plan/plan.js';
import type { CallPort } from '../caller.js';
import { ErrorLogLooks } from '../error-log.js';
import type { HealthGate } from '../health-gate.js';
import { groupMates, groupSettlement, groupUpdates, matesUndone } from './guard-group.js';
import { startIsolation } from './isolation.js';
import { isolate, type IsolationContext } from './isolation-round.js';
import type { RestoreContext } from './restore.js';
import type { SlotPort } from '../backup-slots.js';
import type { RunQuarantine } from '../run-quarantine.js';
import type { CacheClear, StepResult, StopKind } from '../types.js';
import type { VisualBaseline, VisualPort } from '../visual-gate.js';
import type { Watcher, WatchOptions } from '../watcher.js';

/** What isolating a step needs of the run (the executor gives it; isolation sends nothing the run could not). */
export interface IsolationRun {
  caller: CallPort;
  watcher: Watcher;
  logger: Logger;
  visual?: VisualPort;
  blockedBackoffMs: number;
  watchOptions(task: TaskSummary): WatchOptions;
  /** A round's look clears the page cache as a restore's does: its write went, so the look must happen. */
  clearCache(task: TaskSummary, step: Step): Promise<CacheClear>;
  restoring(task: TaskSummary): RestoreContext;
  /** Journals a later word on the step. */
  record(step: Step, result: StepResult): Promise<void>;
  /** False once no write may start: the run stopped, or its window closed. */
  mayGoOn(): boolean;
  whyNot(): string;
  sleep(ms: number): Promise<void>;
  stop(reason: string, kind: StopKind): void;
  /** Manual backup slots, for a round's backup (backup-slots.ts). */
  slots(task: TaskSummary): SlotPort;
  /** The run's own quarantine: what isolation finds is sent nowhere else in the run. */
  quarantine: RunQuarantine;
  /** The plan's steps and the run's results: a guard group's mates (guard-group.ts). */
  steps: readonly Step[];
  results: ReadonlyMap<string, StepResult>;
}

/** What the write's own look left for isolation: its gate, its browser context (spent), its error log read before. */
export interface WriteLooks {
  gate: HealthGate;
  visual?: VisualBaseline;
  log?: ErrorLogLooks;
}

/**
 * `health.on_broken: isolate`, as the executor calls it: after a write's restore, or when a resume
 * finds isolation under way. The rounds themselves are isolation-round.ts's; what to send next,
 * isolation.ts's.
 */
export class Isolator {
  constructor(private readonly run: IsolationRun) {}

  /**
   * A write put back from its restore point, and seen healthy again, has its updates sent again in
   * rounds to find the one that broke the site. A write of one update was its own round: it is the
   * culprit. A guard group's writes (one guard per environment) are taken apart as one write of all
   * their items (guard-group.ts). Writes looked at together with another task's (rollout.together)
   * were seen broken once for all of them, and are not taken apart. Returns the step's result as it then stands.
   */
  async afterRestore(task: TaskSummary, step: Step, restored: StepResult, looks: WriteLooks, url: string): Promise<StepResult> {
    // Put back from its restore point, or (health.undo: items_first) by its items' own files.
    const back = restored.restored ?? restored.undone;
    // What the write sent: a write the run's quarantine trimmed left its culprit out, and no round may put it back.
    const own = restored.sent?.updates ?? step.updates ?? [];
    const mates = groupMates(this.run.steps, step);
    const updates = mates ? groupUpdates(own, matesUndone(mates, this.run.results), this.run.results) : own;
    const isolates = task.health?.on_broken === 'isolate' && updates.length > 0 && step.joins === undefined;
    if (!isolates || back?.status !== 'succeeded' || back.health?.outcome !== 'healthy') {
      this.run.quarantine.addEnd(step, restored);
      return restored;
    }
    const suspect = restored.logged && refFrom(restored.logged);
    return this.rounds(task, step, { ...restored, isolation: startIsolation(updates, suspect) }, looks, url);
  }

  /** Rounds of isolation as the step records them (begun now, or found unfinished by a resume); culprits found go nowhere else in this run. */
  async rounds(task: TaskSummary, step: Step, result: StepResult, looks: WriteLooks, url: string): Promise<StepResult> {
    void looks.visual?.close(); // the write's own look is spent: each round takes its own
    const log = looks.log ?? this.errorLog(step);
    const ended = await isolate({ ...this.context(task, step, looks.gate, url), readLogged: () => log.after() }, step, result);
    this.run.quarantine.addEnd(step, ended);
    return ended.isolation?.outcome === 'isolating' ? ended : this.settleGroup(step, ended);
  }

  /**
   * A guard group's isolation ended: each write of it (the holder last) says what became of its own
   * item (groupSettlement). A process killed between isolation's end and these records left them
   * "undone": resume says them from the journal (planResume).
   */
  private async settleGroup(holder: Step, ended: StepResult): Promise<StepResult> {
    const said = groupSettlement(this.run.steps, holder, ended, this.run.results);
    for (const [step, result] of said) await this.run.record(step, result);
    return said.find(([step]) => step.id === holder.id)?.[1] ?? ended;
  }

  /** The error log of a step's environment, read through its own rate rule; a 401 on the way stops the run. */
  errorLog(step: Step): ErrorLogLooks {
    const kinds = KINDS.map((k) => KIND_TABLE[k]);
    return new ErrorLogLooks(this.run.caller, step.target.env_id!, kinds, { stop: (reason, kind) => this.run.stop(reason, kind), logger: this.run.logger });
  }

  context(task: TaskSummary, step: Step, gate: HealthGate, url: string): IsolationContext {
    const { run } = this;
    const spec = task.health!;
    const visual = run.visual;
    return {
      caller: run.caller,
      watcher: run.watcher,
      watch: run.watchOptions(task),
      kind: ACTIONS.get(step.action)!.items!,
      gate,
      url,
      ...(clearsCache(spec) ? { clearCache: () => run.clearCache(task, step) } : {}),
      ...(spec.visual && visual
        ? {
            visual: {
              before: (n: number) => visual.before(`${step.id}~${n}`, url, spec),
              after: (n: number, b: VisualBaseline) => visual.after(`${step.id}~${n}`, b, spec),
            },
          }
        : {}),
      restoring: run.restoring(task),
      ...(undoesByItems(spec) ? { byItems: true } : {}),
      slots: () => run.slots(task),
      logger: run.logger,
      save: (r) => run.record(step, r),
      mayGoOn: () => run.mayGoOn(),
      blockedBackoffMs: run.blockedBackoffMs,
      sleep: (ms) => run.sleep(ms),
      whyNot: () => run.whyNot(),
      stop: (reason, kind) => run.stop(reason, kind),
    };
  }
}
