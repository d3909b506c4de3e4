import type { Logger } from 'pino';
import { restorePoint } from '../../actions/index.js';
import { findRestorePoint } from '../restore-point.js';
import { makeRoom, roomEntries, type SlotPort } from '../backup-slots.js';
import { ITEM_WRITES } from '../../actions/item-writes.js';
import type { ItemChange, RequestSpec } from '../../actions/action.js';
import { reasonText } from '../../api/answer.js';
import { nameOf, type Kind } from '../../inventory/kinds.js';
import type { Step } from '../../plan/plan.js';
import type { CallPort } from '../caller.js';
import type { HealthGate } from '../health-gate.js';
import { healthOutcome, healthRecord } from '../health-gate.js';
import { nextRound, restoreBound, restoresUsed } from './isolation.js';
import { PRIORITY } from '../rate-budget.js';
import { sendStep } from '../send-step.js';
import { followRestore, restoreBroken, type RestoreContext } from './restore.js';
import { commandsFor, undoByItems } from './undo-items.js';
import type { CacheClear, Isolation, IsolationRound, LoggedError, RestorePoint, StepResult, StopKind } from '../types.js';
import { heldText, type VisualSeen } from '../visual-outcome.js';
import { roundAt } from './state.js';
import type { VisualBaseline } from '../visual-gate.js';
import type { Tracked, Watcher, WatchOptions } from '../watcher.js';
import { BLOCKED, MAX_BLOCKED_RETRIES } from '../follow.js';

/** What rounds of isolation need from the run: the executor holds the environment while they go. */
export interface IsolationContext {
  caller: CallPort;
  watcher: Watcher;
  watch: WatchOptions;
  kind: Kind;
  gate: HealthGate;
  url: string;
  /** Clears the page cache before a round's look (`health.clear_cache`). */
  clearCache?(): Promise<CacheClear>;
  /** `health.visual`: the pages shot before a round's write and compared after it (each round under the task's guards). */
  visual?: {
    before(round: number): Promise<VisualBaseline>;
    after(round: number, baseline: VisualBaseline): Promise<VisualSeen>;
  };
  /** Manual backup slots, as they stand when a round's backup is asked for (what the run still needs changes as it goes). */
  slots(): SlotPort;
  /** A restore's context (a repair: only the run's halt keeps one from going); its `update` is isolation's own. */
  restoring: RestoreContext;
  /**
   * `health.undo: items_first`: a round that breaks the site goes back by its items' own files (two
   * WP-CLI calls, the site's data kept) and takes no backup; the write's own restore point is the way
   * back only when the files could not heal the site.
   */
  byItems?: boolean;
  /** The site's error log, read after a round broke it: a new fatal error naming an item (error-log.ts). */
  readLogged?(): Promise<LoggedError | undefined>;
  logger: Logger;
  /** Journals the step's result as it now stands. */
  save(result: StepResult): Promise<void>;
  /** False once no write may start: the run stopped, or its window closed. */
  mayGoOn(): boolean;
  /** Why no write may start, for the record. */
  whyNot(): string;
  /** First wait before sending a round again whose operation found the environment busy (doubles each time). */
  blockedBackoffMs: number;
  sleep(ms: number): Promise<void>;
  /** A 401 (or lost coordination) met on the way: the run stops. */
  stop(reason: string, kind: StopKind): void;
}

/**
 * Runs isolation rounds on a step whose write broke its site and was put back (`isolation` started),
 * or goes on with one a resume found: each round journaled at every turn, the next one decided from
 * the record (isolation.ts). Returns the step's result as isolation left it: ended, or `isolating`
 * when the run stopped first (a resume goes on).
 */
export async function isolate(ctx: IsolationContext, step: Step, start: StepResult): Promise<StepResult> {
  // A round found unfinished was begun by a run that died: its look before is not this process's.
  const unfinished = start.isolation!.rounds.findIndex((r) => roundAt(r) !== 'ended');
  const looks: Looks = Object.assign(new Map<number, VisualBaseline>(), { resumed: unfinished >= 0 ? unfinished : undefined });
  try {
    return await rounds(ctx, step, start, looks);
  } finally {
    for (const baseline of looks.values()) void baseline.close();
  }
}

/** The looks before rounds this process took, by round; `resumed`: the round a run that died left unfinished. */
type Looks = Map<number, VisualBaseline> & { resumed: number | undefined };

async function rounds(ctx: IsolationContext, step: Step, start: StepResult, looks: Looks): Promise<StepResult> {
  let result = start;
  for (;;) {
    const iso = result.isolation!;
    const last = iso.rounds.at(-1);
    if (last && roundAt(last) !== 'ended') {
      result = await finishRound(ctx, step, result, iso.rounds.length - 1, looks);
      const now = result.isolation!;
      // Not through (the run stopped under it, or an operation is still going): a resume goes on.
      if (roundAt(now.rounds.at(-1)!) !== 'ended') return save(ctx, result, { ...now, reason: `stopped during round ${now.rounds.length}: ${ctx.whyNot()}` });
      continue;
    }
    const next = nextRound(iso, restoreBound(iso.updates.length));
    if ('end' in next) return save(ctx, result, { ...iso, ...next.end });
    if (!ctx.mayGoOn()) return save(ctx, result, { ...iso, reason: `stopped before round ${iso.rounds.length + 1}: ${ctx.whyNot()}` });
    const point = ctx.byItems ? undefined : restorePointFor(result);
    const way = ctx.byItems ? { by_items: true as const } : point ? { restore_point: point } : {};
    const round: IsolationRound = { names: next.send, status: 'sending', ...way };
    result = await save(ctx, result, { ...iso, rounds: [...iso.rounds, round] });
  }
}

/**
 * Takes a round on from where its record stands (roundAt, life/state.ts), state by state, until it
 * ended or can go no further now: a restore point when one is needed, the writes (sent again if they
 * may not all have gone: each asks for a state, so a second one changes nothing), their operations,
 * the look, and the restore of a round that broke the site.
 */
async function finishRound(ctx: IsolationContext, step: Step, result: StepResult, index: number, looks: Looks): Promise<StepResult> {
  let round = result.isolation!.rounds[index]!;
  const put = (r: IsolationRound) => saveRound(ctx, result, index, r).then((next) => ((result = next), (round = r), next));
  const updates = result.isolation!.updates;
  for (;;) {
    const at = roundAt(round);
    if (at === 'waiting') {
      const point = await takeRestorePoint(ctx, step, result, round, index, put);
      if (!point) return result;
      await put({ ...round, restore_point: point });
    } else if (at === 'sending') {
      await sendRound({ ctx, step, index, looks, put, updates }, round);
      if (roundAt(round) === 'sending') return result; // not sent (a halt): a resume sends it
    } else if (at === 'following') {
      await followRound({ ctx, step, index, looks, put, updates }, round);
      if (roundAt(round) === 'following') return result; // untracked (a halt): a resume follows it
    } else if (at === 'restoring' && round.by_items && (round.undone === undefined || round.undone.status === 'sending')) {
      result = await undoRound(ctx, step, result, index);
      round = result.isolation!.rounds[index]!;
      if (round.undone?.status === 'sending') return result; // a halt among its commands: a resume sends them again
    } else if (at === 'restoring') {
      if (round.restored?.status === 'sending')
        return put({ ...round, restored: { ...round.restored, status: 'unknown', reason: 'the run stopped while the restore was being sent' } });
      return restoreRound(ctx, step, result, index, round.restored?.status === 'accepted');
    } else return result;
  }
}

/**
 * The round's writes: each of its items pinned to the version the write judged (never the kind's bulk
 * update, which installs whatever is newest now: a release landing mid-isolation would go in unjudged).
 */
function roundRequests(ctx: IsolationContext, step: Step, updates: readonly ItemChange[], names: readonly string[]): RequestSpec[] {
  const writes = ITEM_WRITES[ctx.kind];
  return names.map((name) => {
    const change = updates.find((u) => nameOf(u) === name);
    if (!change) throw new Error(`isolation round names ${name}, which the write did not update`);
    return writes.pinned(step.target.env_id!, { name, update_version: change.to });
  });
}

/** What a round's moves share: the run's context, the write's step and updates, the round's place and looks, and how it is journaled. */
interface RoundTurn {
  ctx: IsolationContext;
  step: Step;
  index: number;
  looks: Looks;
  put: (r: IsolationRound) => Promise<StepResult>;
  updates: readonly ItemChange[];
}

async function sendRound(turn: RoundTurn, round: IsolationRound): Promise<void> {
  const { ctx, step, index, looks, put, updates } = turn;
  if (!ctx.mayGoOn()) return;
  // The write may have left once `operation_ids` is journaled (a run that died then may have sent it): the
  // look before is only taken while nothing of the round can have gone. One that may have gone is sent
  // again (asking for a state, it changes nothing twice) and followed, so that the look after sees the
  // site as the round left it: broken by its page, it is restored; healthy, its pages cannot be compared
  // (judgeRound says so). A site a round broke is never left so for want of a look before.
  const mayHaveGone = looks.resumed === index && round.operation_ids !== undefined;
  if (ctx.visual && !looks.has(index) && !mayHaveGone) looks.set(index, await ctx.visual.before(index + 1));
  const { operation_ids: _none, ...unsent } = round;
  if (!mayHaveGone) await put((round = { ...unsent, operation_ids: [] }));
  const sent = await sendAll(ctx, step, roundRequests(ctx, step, updates, round.names));
  // Never sent: the record says so, and a resume takes the look before.
  if (sent.went.length === 0 && sent.state === 'not sent' && !sent.gone) return void (mayHaveGone || (await put(unsent)));
  // Cut short with some of it gone: a resume sends it all again (each asks for a state).
  if (sent.state === 'not sent') return void (await put({ ...round, operation_ids: sent.ids }));
  // One of its writes refused with others gone: the round stands for what went (the rest stay to be tried), so its look judges what is on the site.
  // One whose answer or operation is unknown may be on the site: the round keeps its name, and its look judges them together.
  const went = sent.state !== 'failed' ? round : { ...round, names: sent.went, reason: `not sent in this round: ${sent.reason}` };
  if (sent.went.length === 0) await put({ ...round, status: sent.state as 'failed' | 'unknown', reason: sent.reason });
  else if (sent.ids.length > 0) await put({ ...went, status: 'accepted', operation_ids: sent.ids });
  else await judgeRound(ctx, went, index, looks, put);
}

/**
 * Sends a round's writes in turn, each followed to its end before the next leaves (the service
 * runs one operation an environment at a time), stopping at the first that does not go: the names
 * that went, the operations they started, and why the rest did not.
 */
async function sendAll(
  ctx: IsolationContext,
  step: Step,
  requests: readonly RequestSpec[],
): Promise<{ went: string[]; ids: string[]; state: 'done' | 'failed' | 'unknown' | 'not sent'; reason?: string; gone?: boolean }> {
  const went: string[] = [];
  const ids: string[] = [];
  for (const [i, request] of requests.entries()) {
    const name = ITEM_WRITES[ctx.kind].pinnedOf(request.body)!.name;
    // Once its first write left, the round is a write under way: only a halt keeps the rest from going.
    const sent = await sendFollowed(ctx, step, request, i > 0);
    // Cut by a halt: `gone`, one of it may have reached the service (a resume then sends it all again, and takes no look before).
    if (sent.state === 'not sent') return { went, ids, state: 'not sent', gone: sent.gone === true || went.length > 0 };
    if (sent.state !== 'done') return { went, ids, state: sent.state, reason: `${name}: ${sent.reason}` };
    if (sent.operationId) ids.push(sent.operationId);
    went.push(name);
  }
  return { went, ids, state: 'done' };
}

/**
 * One write of a round, sent and followed to its end; sent again after a wait when its operation
 * found the environment busy (with one this round's own earlier send left going: a resume sends again).
 */
async function sendFollowed(
  ctx: IsolationContext,
  step: Step,
  request: RequestSpec,
  underWay: boolean,
): Promise<{ state: 'done'; operationId?: string } | { state: 'failed' | 'unknown'; reason: string } | { state: 'not sent'; gone?: boolean }> {
  for (let blocked = 0; ; blocked++) {
    const sent = await sendWrite(ctx, step, request, true, underWay || blocked > 0);
    if (sent.stop) ctx.stop(sent.stop.reason, sent.stop.kind);
    if (sent.state !== 'accepted') return sent.state === 'done' ? { state: 'done' } : sent;
    const tracked = await followAll(ctx, [sent.operationId]);
    if (tracked.state === 'untracked') return { state: 'not sent', gone: true }; // accepted, then halted: a resume sends the round again
    if (tracked.state === 'succeeded') return { state: 'done', operationId: sent.operationId };
    if (tracked.state === 'failed' && BLOCKED.test(tracked.message) && blocked < MAX_BLOCKED_RETRIES && ctx.mayGoOn()) {
      await ctx.sleep(ctx.blockedBackoffMs * 2 ** blocked);
      continue;
    }
    return { state: tracked.state, reason: `operation ${tracked.state}: ${reasonText(tracked)}` };
  }
}

async function followRound(turn: RoundTurn, round: IsolationRound): Promise<void> {
  const { ctx, index, looks, put } = turn;
  for (let blocked = 0; ; blocked++) {
    const tracked = await followAll(ctx, round.operation_ids ?? []);
    if (tracked.state === 'untracked') return; // the run stopped: a resume follows it
    if (tracked.state === 'succeeded') return judgeRound(ctx, round, index, looks, put);
    // Busy with an operation this round's own earlier send left going (a resume sent it again): as a write is, sent again after a wait.
    if (tracked.state === 'failed' && BLOCKED.test(tracked.message) && blocked < MAX_BLOCKED_RETRIES && ctx.mayGoOn()) {
      await ctx.sleep(ctx.blockedBackoffMs * 2 ** blocked);
      round = { ...round, status: 'sending', operation_ids: [] };
      await put(round);
      await sendRound({ ...turn, put: (r) => put((round = r)) }, round);
      if (round.status !== 'accepted') return;
      continue;
    }
    return void (await put({ ...round, status: tracked.state, reason: `operation ${tracked.state}: ${reasonText(tracked)}` }));
  }
}

/** The round's operations followed in turn: the first that does not succeed says how the round went. */
async function followAll(ctx: IsolationContext, ids: readonly string[]): Promise<Tracked> {
  let last: Tracked = { state: 'succeeded', polls: 0 };
  for (const id of ids) {
    const watch = ctx.watcher.watch(id, 'isolation round', ctx.watch);
    watch.expedite();
    last = await watch.done;
    if (last.state !== 'succeeded') return last;
  }
  return last;
}

/** The look after a round: the cache cleared, the page checked, and compared; broken is what the write's own look calls broken. */
async function judgeRound(
  ctx: IsolationContext,
  round: IsolationRound,
  index: number,
  looks: Looks,
  put: (r: IsolationRound) => Promise<StepResult>,
): Promise<void> {
  const cache = ctx.clearCache ? await ctx.clearCache() : undefined;
  const after = await ctx.gate.check(ctx.url);
  if (!after) return; // interrupted: a resume looks again
  const healthy = { healthy: true, detail: 'healthy before the round' } as const;
  const { failsStep, holdsStep } = healthOutcome(healthy, after, cache);
  const health = healthRecord(ctx.url, healthy, after, cache);
  if (holdsStep) return void (await put({ ...round, status: 'unknown', health, reason: 'the page cache was not cleared: the round cannot be judged' }));
  const baseline = looks.get(index);
  if (ctx.visual && !failsStep && !baseline)
    return void (await put({
      ...round,
      status: 'unknown',
      health,
      reason: 'the run stopped during the round: the look before it is gone, so its pages cannot be compared',
    }));
  looks.delete(index);
  // after() lets go of the look it compares; a round its page broke is not compared, and its look goes
  // here (not awaited: the restore never waits on the browser). Left open, its context's proxy keeps the process alive.
  if (failsStep) void baseline?.close();
  const seen = !failsStep && baseline ? await ctx.visual!.after(index + 1, baseline) : undefined;
  const broken = failsStep || seen?.broken !== undefined;
  // Pages not looked at, or changed past hold_over: no healthy round (a write would be held), and a person looks.
  if (!broken && seen?.held) {
    const page = seen.record.pages.find((p) => p.url === seen.held!.url);
    return void (await put({ ...round, status: 'unknown', health, visual: seen.record.outcome, reason: `its pages: ${heldText(seen.held, page)}` }));
  }
  const logged = broken && ctx.readLogged ? await ctx.readLogged() : undefined;
  await put({
    ...round,
    status: broken ? 'broken' : 'healthy',
    health,
    ...(seen ? { visual: seen.record.outcome } : {}),
    ...(broken ? { reason: failsStep ? `health: ${after.detail} at ${ctx.url}` : seen!.broken! } : {}),
    ...(logged ? { logged } : {}),
  });
}

/** A write's first answer, and the operation it started. */
type Sent =
  | { state: 'accepted'; operationId: string; stop?: undefined }
  | { state: 'done'; stop?: undefined }
  | { state: 'failed' | 'unknown'; reason: string; stop?: { reason: string; kind: StopKind } }
  | { state: 'not sent'; gone?: boolean; stop?: { reason: string; kind: StopKind } };

/**
 * One write of a round (or its backup) through the run's own send (send-step.ts): the same body
 * check, retries and place among the calls as the write's; a halt keeps it from leaving.
 */
async function sendWrite(ctx: IsolationContext, step: Step, request: RequestSpec, idempotent: boolean, underWay = false): Promise<Sent> {
  const write: Step = { ...step, endpoint: request.endpoint, params: request.params, body: request.body, idempotent };
  const halt = ctx.restoring.interrupt ?? new AbortController().signal;
  const send = { caller: ctx.caller, env: {}, mayStillSend: () => (underWay ? !halt.aborted : ctx.mayGoOn()) };
  const { result, stopRun } = await ctx.caller.withPlace(PRIORITY.write, request.endpoint, (place) => sendStep(write, send, halt, place));
  const reason = result.error ?? result.reason ?? result.status;
  const stop = stopRun ? { reason, kind: stopRun } : undefined;
  if (result.status === 'accepted') return { state: 'accepted', operationId: result.operation_id! };
  if (result.status === 'succeeded') return { state: 'done' };
  // Stopped before it could count: not sent, unless a write not safe to repeat may have reached the service.
  // An attempt that left may have reached the service (`gone`): sent again only when safe to repeat.
  if (result.status === 'skipped' && (result.attempts === 0 || idempotent || stop))
    return { state: 'not sent', ...(result.attempts > 0 ? { gone: true } : {}), ...(stop ? { stop } : {}) };
  return { state: result.status === 'failed' ? 'failed' : 'unknown', reason, ...(stop ? { stop } : {}) };
}

/**
 * The restore point a new round can go back to: the one the site was last put back to, when nothing
 * went in since (the write's own, or the last broken round's); none after a healthy round.
 */
function restorePointFor(result: StepResult): RestorePoint | undefined {
  const last = result.isolation!.rounds.at(-1);
  if (!last) return result.restore_point;
  return last.status === 'broken' ? last.restore_point : undefined;
}

/**
 * A manual backup before a round that goes on top of updates installed since the last restore
 * point, tagged after the write's own. A backup asked for when the run died may have been made: it
 * is looked for by its tag, never asked for twice.
 */
async function takeRestorePoint(
  ctx: IsolationContext,
  step: Step,
  result: StepResult,
  round: IsolationRound,
  index: number,
  put: (r: IsolationRound) => Promise<StepResult>,
): Promise<RestorePoint | undefined> {
  const tag = `${result.restore_point?.tag ?? 'sitefleet-isolate'}-round-${index + 1}`;
  const backupStep: Step = { ...step, body: { tag }, params: { env_id: step.target.env_id! } };
  let backup = round.backup;
  if (backup?.status === 'sending') {
    const found = await findRestorePoint(ctx.caller, backupStep, ctx.logger);
    if (found.point.backup_id !== null) return found.point;
    await put({
      ...round,
      status: 'failed',
      reason: `its backup (tag ${tag}) may have been asked for when the run stopped, and the backup list does not show it: not asked for twice`,
    });
    return undefined;
  }
  let earlier: ReadonlySet<number> | undefined;
  if (!backup) {
    const asked = await askForBackup(ctx, step, round, tag, put);
    if (!asked) return undefined;
    ({ backup, earlier, round } = asked);
  }
  if (backup.status === 'accepted' && backup.operation_id) {
    const watch = ctx.watcher.watch(backup.operation_id, 'backups:add', ctx.watch);
    const tracked = await watch.done;
    if (tracked.state === 'untracked') return undefined;
    if (tracked.state !== 'succeeded')
      return void (await put({ ...round, backup: { ...backup, status: tracked.state }, status: 'failed', reason: `its backup: ${reasonText(tracked)}` }));
    backup = { ...backup, status: 'succeeded' };
  }
  // A backup an earlier run left with the same tag is never this round's restore point.
  const found = await findRestorePoint(ctx.caller, backupStep, ctx.logger, earlier);
  if (found.stop) ctx.stop(found.stop.reason, found.stop.kind);
  // No id, nothing a restore could send: the round does not go without a way back.
  if (found.point.backup_id === null)
    return void (await put({
      ...round,
      backup,
      status: 'failed',
      reason: `its backup (tag ${tag}) is not in the backup list: no round goes without a restore point`,
    }));
  await put({ ...round, backup, restore_point: found.point });
  return found.point;
}

type Backup = NonNullable<IsolationRound['backup']>;

/**
 * Asks for a round's backup, once there is a slot for it (backup-slots.ts: only backups sitefleet
 * made are removed to make room; every slot a person's, the round fails saying so, and isolation
 * stops with the site as the last round left it). Journaled `sending` before it leaves; the backups
 * removed for it on the round (`room`), which it returns as it now stands.
 */
async function askForBackup(
  ctx: IsolationContext,
  step: Step,
  round: IsolationRound,
  tag: string,
  put: (r: IsolationRound) => Promise<StepResult>,
): Promise<{ backup: Backup; earlier: ReadonlySet<number>; round: IsolationRound } | undefined> {
  if (!ctx.mayGoOn()) return undefined;
  const label = [step.target.site, step.target.environment].filter(Boolean).join('/') || step.target.env_id!;
  const room = await makeRoom(ctx.slots(), step.target.env_id!, tag, label);
  if (room.kind === 'failed' && room.stop) ctx.stop(room.stop.reason, room.stop.kind);
  const removed = room.kind === 'held' ? [] : roomEntries(room.removed ?? []);
  if (removed.length > 0) round = { ...round, room: [...(round.room ?? []), ...removed] };
  if (room.kind !== 'room') return void (await put({ ...round, status: 'failed', reason: `its backup: ${room.reason}` }));
  const backup: Backup = { operation_id: null, status: 'sending' };
  await put({ ...round, backup });
  const sent = await sendWrite(ctx, step, restorePoint.request(step.target.env_id!, tag), false);
  if (sent.stop) ctx.stop(sent.stop.reason, sent.stop.kind);
  // Cut before it left: not asked for. One that may have reached the service stays `sending`: a resume looks for it by its tag.
  if (sent.state === 'not sent') return void (sent.gone ? undefined : await put({ ...round, backup: undefined }));
  if (sent.state !== 'accepted' && sent.state !== 'done')
    return void (await put({ ...round, backup: { ...backup, status: sent.state }, status: 'failed', reason: `its backup: ${sent.reason}` }));
  const asked: Backup = { operation_id: sent.state === 'accepted' ? sent.operationId : null, status: sent.state === 'accepted' ? 'accepted' : 'succeeded' };
  await put({ ...round, backup: asked });
  return { backup: asked, earlier: room.earlier, round };
}

/**
 * The restore of a round that broke the site, from the round's restore point, through the same code
 * as the write's own (restore.ts): journaled `sending` before it leaves, followed, the site checked
 * again. A halt before it leaves keeps it for a resume.
 */
async function restoreRound(ctx: IsolationContext, step: Step, result: StepResult, index: number, following: boolean): Promise<StepResult> {
  const round = result.isolation!.rounds[index]!;
  if (!following && ctx.restoring.interrupt?.aborted) return result;
  let latest = result;
  const restoring: RestoreContext = {
    ...ctx.restoring,
    update: async (_s, r) => {
      latest = await saveRound(ctx, latest, index, { ...latest.isolation!.rounds[index]!, restored: r.restored! });
    },
  };
  // A round by items has no restore point of its own: the write's is the way back once its files could not heal the site.
  const broken: StepResult = { ...result, restore_point: round.restore_point ?? (round.by_items ? result.restore_point : undefined), restored: round.restored };
  if (following) await followRestore(restoring, step, broken, ctx.gate, ctx.url);
  else await restoreBroken(restoring, step, { ...broken, restored: undefined }, ctx.gate, ctx.url);
  return latest;
}

/**
 * A round that broke the site, put back by its items' own files (undo-items.ts, as the write's own
 * put-back): each command journaled before it leaves, then the cache cleared and the page looked at.
 */
async function undoRound(ctx: IsolationContext, step: Step, result: StepResult, index: number): Promise<StepResult> {
  const round = result.isolation!.rounds[index]!;
  const changes = result.isolation!.updates.filter((u) => round.names.includes(nameOf(u)));
  let latest = result;
  const restoring: RestoreContext = {
    ...ctx.restoring,
    update: async (_s, r) => {
      latest = await saveRound(ctx, latest, index, { ...latest.isolation!.rounds[index]!, undone: r.undone! });
    },
  };
  const planned = round.undone ?? commandsFor(ctx.kind, step.target.env_id!, changes);
  await undoByItems(restoring, step, { ...result, undone: planned }, ctx.gate, ctx.url);
  return latest;
}

/** Journals a round as it now stands. */
function saveRound(ctx: IsolationContext, result: StepResult, index: number, round: IsolationRound): Promise<StepResult> {
  const iso = result.isolation!;
  return save(ctx, result, { ...iso, rounds: iso.rounds.map((r, i) => (i === index ? round : r)) });
}

/** The step's result with isolation as it stands, its restores counted, and (once ended) its status and reason saying what came of it. */
async function save(ctx: IsolationContext, result: StepResult, iso: Isolation): Promise<StepResult> {
  // The write's own way back was its items' files (health.undo: items_first) when they healed the site: no restore.
  const ownByFiles = result.undone?.status === 'succeeded' && !result.restored ? 1 : 0;
  const isolation = { ...iso, restores: restoresUsed(iso) - ownByFiles };
  const byFiles = ownByFiles + iso.rounds.filter((r) => r.undone && r.undone.status !== 'not sent').length;
  const next: StepResult = { ...result, isolation, ...endedAs(isolation, byFiles, ownByFiles ? "put back by its items' files" : 'restored') };
  await ctx.save(next);
  return next;
}

const words = (changes: readonly ItemChange[]) => changes.map((c) => `${nameOf(c)} ${c.from} → ${c.to}`).join(', ');

/** What the step's status and reason say once isolation ended (or stopped where a resume goes on). */
function endedAs(iso: Isolation, byFiles: number, putBack: string): Pick<StepResult, 'status' | 'reason'> {
  const out = new Set([...iso.culprits, ...(iso.left ?? [])].map((c) => nameOf(c)));
  const kept = iso.updates.filter((u) => !out.has(nameOf(u))).length;
  const files = byFiles > 0 ? `, ${byFiles} put-back${byFiles === 1 ? '' : 's'} by the items' files, the site's data kept` : '';
  const restores = `${iso.restores} restore${iso.restores === 1 ? '' : 's'}${files}`;
  switch (iso.outcome) {
    case 'found':
      return {
        status: 'failed',
        reason: `isolated: ${words(iso.culprits)} broke the site and ${iso.culprits.length === 1 ? 'is' : 'are'} back on the old version; the other ${kept} update${kept === 1 ? ' is' : 's are'} in (${restores})`,
      };
    case 'not reproduced':
      return {
        status: 'succeeded',
        reason: `the site broke after the write and was ${putBack}; its updates went in again in rounds and none broke it again: all ${kept} are in (${restores})`,
      };
    case 'stopped':
      return {
        status: 'failed',
        reason: `isolation stopped: ${iso.reason ?? 'no reason given'}; not installed: ${words(iso.left ?? [])}${iso.culprits.length ? `; found to break the site: ${words(iso.culprits)}` : ''}`,
      };
    case 'isolating':
      return {
        status: 'failed',
        reason: `isolating the update that broke the site: ${iso.reason ?? 'under way'}; \`sitefleet resume\` goes on (${restores} so far)`,
      };
  }
}
