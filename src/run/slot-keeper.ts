import type { Logger } from 'pino';
import type { Backup } from '../api/types.js';
import type { Plan, Step, TaskSummary } from '../plan/plan.js';
import { beyondKeep, DEFAULT_MANUAL_BACKUP_SLOTS, makeRoom, oursIn, removeBackups, roomEntries, seriesOf, tagOfBackup, type SlotPort } from './backup-slots.js';
import type { CallPort } from './caller.js';
import { mergeSlots } from './slot-record.js';
import { ENDED_STATUSES, type BackupSlots, type StepResult, type StopKind } from './types.js';
import type { Watcher, WatchOptions } from './watcher.js';

/** What the slots need of the run (executor.ts is the one): its calls, its record, each environment's turn. */
export interface SlotRun {
  readonly plan: Plan;
  readonly results: Map<string, StepResult>;
  readonly options: { caller: CallPort; logger: Logger };
  readonly watcher: Watcher;
  readonly sequence: { enter(env: string | undefined): Promise<() => void> };
  readonly stop: { stop(reason: string, kind: StopKind): void };
  watchOptions(task: TaskSummary): WatchOptions;
  record(type: 'result' | 'update', step: Step, result: StepResult): Promise<void>;
  /** Journals a restore point's room at once (before its backup is asked for). */
  recordRoom(step: Step, slots: BackupSlots): Promise<void>;
  sendsOver(): boolean;
}

/**
 * A run's manual backup slots (backup-slots.ts): room made before each wave's backups, in their
 * environment's turn; a night's restore points removed once their writes were judged healthy, and
 * `keep` honoured. It remembers the backups each creation found with its own tag (an earlier run's),
 * which are never this run's restore point.
 */
export class SlotKeeper {
  /**
   * Each backup step's room (what it removed before it was sent, and what its tag carried before):
   * journaled once made, and on each of its records (withRoom). A resumed run starts from the journal's.
   */
  readonly #rooms: Map<string, BackupSlots>;
  /**
   * Worked out once, as the plan does not change during a run: its own tags, and its steps by
   * environment. Each is a pass over the plan; once a restore point, they cost a night of 500
   * environments minutes of CPU before its first backup and after its last write (bench scenario 32).
   */
  #ours?: (tag: string) => boolean;
  #byEnv?: Map<string | undefined, Step[]>;

  constructor(
    private readonly run: SlotRun,
    journaled: ReadonlyMap<string, BackupSlots> = new Map(),
  ) {
    this.#rooms = new Map(journaled);
  }

  /** Backups that carried a backup step's tag before it was sent: never its restore point. */
  earlier(step: Step): ReadonlySet<number> | undefined {
    const earlier = [...(this.#rooms.get(step.id)?.earlier ?? []), ...(this.run.results.get(step.id)?.backup_slots?.earlier ?? [])];
    return earlier.length > 0 ? new Set(earlier) : undefined;
  }

  /**
   * A backup step's record with what its room removed and what its tag carried before it, from its
   * first record on: a run killed before its task ended still reports each removal (the report
   * records every call), and a resume still knows which backups of its tag are an earlier run's.
   */
  withRoom(step: Step, result: StepResult): StepResult {
    const room = this.#rooms.get(step.id);
    return room ? { ...result, backup_slots: mergeSlots(result.backup_slots, room) } : result;
  }

  /** `env`: the slots of that environment only, whose list holds none of another's backups. */
  port(task: TaskSummary, env?: string): SlotPort {
    const { plan, options, watcher } = this.run;
    return {
      caller: options.caller,
      watcher,
      watch: this.run.watchOptions(task),
      logger: options.logger,
      slots: plan.settings.manual_backup_slots ?? DEFAULT_MANUAL_BACKUP_SLOTS,
      ours: (this.#ours ??= oursIn(plan)),
      spared: needed(env === undefined ? plan.steps : this.#stepsOf(env), this.run.results),
    };
  }

  /** An environment's steps, and those of no one environment (whose restore points any list may hold). */
  #stepsOf(env: string): readonly Step[] {
    if (!this.#byEnv) {
      this.#byEnv = new Map();
      for (const s of this.run.plan.steps) {
        const steps = this.#byEnv.get(s.target.env_id);
        if (steps) steps.push(s);
        else this.#byEnv.set(s.target.env_id, [s]);
      }
    }
    return [...(this.#byEnv.get(env) ?? []), ...(this.#byEnv.get(undefined) ?? [])];
  }

  /** Room for each manual backup the wave creates; one with none is held (`no_backup_slot`) with the writes it guards, or fails. */
  async beforeWave(task: TaskSummary, wave: readonly Step[]): Promise<void> {
    const creating = wave.filter((s) => s.endpoint === 'addManualBackup' && !ENDED_STATUSES.has(this.run.results.get(s.id)?.status ?? 'planned'));
    await Promise.all(creating.map((step) => this.#room(task, step)));
  }

  async #room(task: TaskSummary, step: Step): Promise<void> {
    if (this.run.sendsOver()) return;
    const env = step.target.env_id!;
    const label = [step.target.site, step.target.environment].filter(Boolean).join('/') || env;
    const release = await this.run.sequence.enter(step.lock ?? env);
    let outcome;
    try {
      outcome = await makeRoom(this.port(task, env), env, tagOf(step), label);
    } finally {
      release();
    }
    if (outcome.kind === 'room') {
      if (outcome.removed.length === 0 && outcome.earlier.size === 0) return;
      const room: BackupSlots = { removed: roomEntries(outcome.removed), ...(outcome.earlier.size > 0 ? { earlier: [...outcome.earlier] } : {}) };
      this.#rooms.set(step.id, mergeSlots(this.#rooms.get(step.id), room));
      return this.run.recordRoom(step, room);
    }
    const base = { http_status: null, operation_id: null, attempts: 0, error: null, reason: outcome.reason };
    if (outcome.kind === 'failed') {
      if (outcome.stop) this.run.stop.stop(outcome.stop.reason, outcome.stop.kind);
      // Those removed before the problem went all the same.
      const removed = roomEntries(outcome.removed ?? []);
      const slots = removed.length > 0 ? { backup_slots: { removed } } : {};
      return this.run.record('result', step, { step_id: step.id, status: outcome.stop ? 'skipped' : 'failed', ...base, ...slots });
    }
    // Not sent, and not silently dropped: the backup and each write it guards are held, naming what to do.
    for (const s of [step, ...this.run.plan.steps.filter((w) => w.backup_step === step.id)])
      await this.run.record('result', s, { step_id: s.id, status: 'held', ...base, held: outcome.held });
  }

  /**
   * Once the task's writes were judged: each restore point whose writes all ended healthy goes (with
   * the night's isolation rounds), but the newest `backup_first.keep` of the task's; a task of manual backups
   * with `keep` keeps its newest. A restore point of a write not healthy stays: a person may restore it.
   */
  async afterTask(task: TaskSummary): Promise<void> {
    const { plan, results } = this.run;
    const keep = task.backup_first?.keep ?? task.keep_backups;
    const own = plan.steps.filter((s) => s.task_index === task.index && s.endpoint === 'addManualBackup' && results.get(s.id)?.status === 'succeeded');
    const guards = guardedBy(plan.steps);
    await Promise.all(
      own.map(async (step) => {
        const guarded = step.role === 'backup';
        const judged = guarded && (guards.get(step.id) ?? []).every((w) => results.get(w.id)?.status === 'succeeded');
        const series = seriesOf(tagOf(step), plan.date);
        const rounds = guarded ? new RegExp(`${series.source.slice(0, -1)}-round-\\d+$`) : undefined;
        const pruned =
          judged || (!guarded && keep !== undefined)
            ? await this.#prune(task, step, series, (list, spared) => beyondKeep(list, series, keep ?? 0, spared, rounds))
            : undefined;
        await this.#journal(step, pruned, guarded ? 'judged' : 'keep', keep);
      }),
    );
  }

  /** What the step's slots lost and kept, on its journal record (and so in the report): said only when there is something new to say. */
  async #journal(step: Step, pruned: { removed: Backup[]; kept: Backup[] } | undefined, why: 'judged' | 'keep', keep: number | undefined): Promise<void> {
    const result = this.run.results.get(step.id);
    const removed = (pruned?.removed ?? []).map((b) => ({ id: b.id, tag: tagOfBackup(b), why }));
    const kept = keep !== undefined && pruned ? pruned.kept.map((b) => b.id) : undefined;
    if (!result || (removed.length === 0 && kept === undefined)) return;
    // Its room and earlier backups are on its record already (withRoom), or on the record a resumed run read.
    await this.run.record('update', step, { ...result, backup_slots: mergeSlots(result.backup_slots, { removed, ...(kept ? { kept } : {}) }) });
  }

  /** Removes what `choose` picks of the environment's list; returns what went and what of the step's series stays (undefined: the list could not be read). */
  async #prune(
    task: TaskSummary,
    step: Step,
    series: RegExp,
    choose: (list: Backup[], spared: ReadonlySet<number>) => Backup[],
  ): Promise<{ removed: Backup[]; kept: Backup[] } | undefined> {
    if (this.run.sendsOver()) return undefined;
    const env = step.target.env_id!;
    const port = this.port(task, env);
    const release = await this.run.sequence.enter(step.lock ?? env);
    try {
      const list = (await port.caller.read('listBackups', { env_id: env })).environment.backups;
      const chosen = choose(list, port.spared);
      const { problem, removed } = await removeBackups(port, env, chosen);
      if (problem) port.logger.warn({ env, problem }, 'could not remove a backup sitefleet made: it stays, and takes a slot');
      const kept = list.filter((b) => b.type === 'manual' && series.test(tagOfBackup(b)) && !removed.includes(b));
      return { removed, kept };
    } catch (error) {
      port.logger.warn({ env, err: (error as Error).message }, 'could not read the backup list to remove the restore points judged: they stay');
      return undefined;
    } finally {
      release();
    }
  }
}

function tagOf(step: Step): string {
  const tag = (step.body as { tag?: unknown } | undefined)?.tag;
  return typeof tag === 'string' ? tag : '';
}

/**
 * The backups this run may still need, of `steps` (the plan's, or one environment's): the restore
 * points (the writes' own and their isolation rounds') of every write not ended healthy, and of every backup step whose writes are not all healthy.
 */
function needed(steps: readonly Step[], results: ReadonlyMap<string, StepResult>): Set<number> {
  const ids = new Set<number>();
  const add = (r: StepResult | undefined) => {
    if (r?.restore_point && r.restore_point.backup_id !== null) ids.add(r.restore_point.backup_id);
    for (const round of r?.isolation?.rounds ?? []) if (round.restore_point && round.restore_point.backup_id !== null) ids.add(round.restore_point.backup_id);
  };
  const guards = guardedBy(steps);
  for (const step of steps) {
    const r = results.get(step.id);
    if (step.role === 'backup') {
      const writes = guards.get(step.id) ?? [];
      if (!writes.every((w) => results.get(w.id)?.status === 'succeeded')) add(r);
    } else if (r && r.status !== 'succeeded') add(r);
  }
  return ids;
}

/** Each backup step's writes (the steps whose `backup_step` names it), by the backup step's id. */
function guardedBy(steps: readonly Step[]): Map<string, Step[]> {
  const by = new Map<string, Step[]>();
  for (const w of steps) {
    if (w.backup_step === undefined) continue;
    const writes = by.get(w.backup_step);
    if (writes) writes.push(w);
    else by.set(w.backup_step, [w]);
  }
  return by;
}
