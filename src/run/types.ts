import type { Created, ItemChange, ItemVersion } from '../actions/action.js';
import type { ItemRef } from '../inventory/kinds.js';
import type { Step } from '../plan/plan.js';

/**
 * The vocabulary of a run, shared by the executor, the journal, the report and the commands.
 * `held`: a person should look: the write happened and the site answers, but its pages look different
 * (health.visual) or were not seen as visitors get them (cache_not_cleared); or, with nothing sent,
 * its page could not be seen healthy before the write (unseen, broken_before).
 */
export type StepStatus = 'planned' | 'accepted' | 'succeeded' | 'failed' | 'held' | 'skipped' | 'unknown';

/** Every status, in the order counts are listed. */
export const STEP_STATUSES: readonly StepStatus[] = ['planned', 'accepted', 'succeeded', 'failed', 'held', 'skipped', 'unknown'];

/** A count of 0 for every status: where summaries and per-task counts start. */
export function zeroCounts(): Record<StepStatus, number> {
  return Object.fromEntries(STEP_STATUSES.map((s) => [s, 0])) as Record<StepStatus, number>;
}

/**
 * The one rule for what a person must look at: a step that failed, was held, or whose outcome is
 * unknown (it may or may not have happened). Every count, list, exit code and sink of the problems
 * uses this.
 */
export function isProblem(status: StepStatus): boolean {
  return status === 'failed' || status === 'unknown' || status === 'held';
}

/**
 * What a task's failure budget counts: the problems, but a held step only with `fail_on_hold` (a
 * change to look at is not a failure that should stop the rollout).
 */
export function countsAgainstBudget(status: StepStatus, failOnHold: boolean): boolean {
  return isProblem(status) && (status !== 'held' || failOnHold);
}

/**
 * How the reason of a write a restore undid begins (the environment was put back from a restore point
 * taken before it, after a later write of the task broke the site): failed, but not for what it
 * installed, so no verdict on its version (staging first records none).
 */
export const UNDONE = 'undone: ';

/** The problems a summary counts (isProblem's statuses); a report of an older version has no `held`. */
export function problemCount(summary: Record<StepStatus, number>): number {
  return summary.failed + summary.unknown + (summary.held ?? 0);
}

export interface StepResult {
  step_id: string;
  status: StepStatus;
  http_status: number | null;
  operation_id: string | null;
  attempts: number;
  error: string | null;
  reason: string | null;
  /** What a synchronous answer held that is a secret (a login link): kept for its private file only, never journaled or reported. */
  private_output?: unknown;
  /** What the finished operation's answer carried (`data`), as the service sent it; absent when it carried nothing. */
  operation_data?: unknown;
  /** `operation_data` was too large (or too deep) to keep: its size in characters of JSON and its beginning. */
  operation_data_cut?: { chars: number; head: string };
  /** What a creating step's operation made, by the id the service gave it. */
  created?: Created;
  /** What a command printed (a WP-CLI command's step), once its operation succeeded: null when the service returned none. */
  output?: string | null;
  /** `output` was cut to its first part: how many characters there were. */
  output_cut?: number;
  /** A task with `health:`: what the site's page said before the write and after its operation. */
  health?: HealthRecord;
  /** What the environment runs after the write, as a listing read after the task's operations shows it (an item write: actions' `readBack`). */
  runs?: ItemVersion[];
  /**
   * Why a write failed, as data, where a code says it. `not_updated`: its operation succeeded, but read
   * back the environment still runs the version the write replaced (`stays`): a premium item without
   * its licence, whose update the service "runs" while WordPress finds no package. Counted against the
   * task's budget, and tried again after `retry_backoff` (may-pass.ts).
   */
  failure?: NotUpdated;
  /** `listing`: the operation's success was read from the listing (one read for many), not from its own answer. */
  confirmed_by?: 'listing';
  /** A task with `backup_first:`: the backup this environment can be restored from (on the backup step and on the write). */
  restore_point?: RestorePoint;
  /**
   * `health.undo: items_first`: the site this write broke, put back first by the versions the write
   * replaced, through WP-CLI (files only: the site's data is kept). `restored` follows only when the
   * site was still broken after it (or it could not be done).
   */
  undone?: UndoneByItems;
  /** `health.on_broken: restore`: the site this write broke, put back from its restore point (the step stays failed). */
  restored?: Restored;
  /** `health.visual`: what the screenshots before and after the write showed, page by page. */
  visual?: VisualRecord;
  /** Why a `held` step was held, as data: its reason code, what it found, and what overrides it. */
  held?: HeldReason | CacheHeldReason | NotLooked | BeforeHeldReason | NoSlotHeld | NotReadBack | DatabaseHeld;
  /**
   * The commands run after the write (life/database-step.ts): WordPress's `wp core update-db` after a
   * core write (and after a restore that moved it back), an item's own (`with.after_update`), in order.
   */
  database?: DatabaseRun[];
  /** A manual backup step (a restore point, or a backup task's): the backups of sitefleet's its slots removed, and what they kept (slot-keeper.ts). */
  backup_slots?: BackupSlots;
  /** `health.on_broken: isolate`: after its restore, how the write was taken apart to find the update that broke the site. */
  isolation?: Isolation;
  /** The site's PHP error log named this item's files in a fatal error that was not there before the write (service text: shown only through safe-text). */
  logged?: LoggedError;
  /** The write as it was sent, when the run left updates out of the plan's (found to break a site earlier in the run): the report says this, not the plan's. */
  sent?: SentWrite;
}

/** A write read back on the versions it replaced: the service ran it, the site did not move. */
export interface NotUpdated {
  code: 'not_updated';
  /** The items the environment still runs on the version the write replaced. */
  stays: ItemVersion[];
}

/** What a write the run's quarantine trimmed sent instead of the plan's (run-quarantine.ts). */
export interface SentWrite {
  body: unknown;
  precondition?: string;
  updates?: ItemChange[];
}

/** A fatal error the site's error log showed after a write broke it, and not before, naming an item's files. */
export type LoggedError = ItemRef & {
  /** The log line, cut to 500 characters: the service's text, never authority. */
  line: string;
};

/**
 * `health.on_broken: isolate`: a write of n updates broke its site and was restored; its updates are
 * sent again in rounds (the suspect the error log named alone first, then halves), each under the
 * task's guards, until the update that breaks the site is alone. Every other update stays installed.
 * At most 1 + ⌈log2 n⌉ restores, the first one included. Each round is journaled as it goes, so a
 * resume replays the ended rounds as data and goes on with the next, never restoring one again.
 */
export interface Isolation {
  /** The write's updates, in the order rounds take them. */
  updates: ItemChange[];
  /** The item the error log named, tried alone first. */
  suspect?: ItemRef;
  rounds: IsolationRound[];
  /**
   * `isolating`: rounds are left (a resume goes on); `found`: the culprits were each seen breaking the
   * site alone and are back on their old versions, every other update is in; `not reproduced`: no
   * round broke the site (every update is in: the first breakage did not come back); `stopped`: the
   * restore bound, the window, Ctrl-C or a round that could not be judged ended it (`reason`), and the
   * updates not in are `left`.
   */
  outcome: 'isolating' | 'found' | 'not reproduced' | 'stopped';
  /** The updates that broke the site, each seen breaking it when sent alone. */
  culprits: ItemChange[];
  /** Updates not installed when isolation stopped (neither found guilty nor sent in a healthy round). */
  left?: ItemChange[];
  reason?: string;
  /** Restores used, the write's own first one included. */
  restores: number;
}

/** One round: its updates sent on top of those already in, checked, and put back when they broke the site. */
export interface IsolationRound {
  /** The items this round sends (names of the write's kind). */
  names: string[];
  /** The restore point the round can go back to: the last one, when nothing was installed since. */
  restore_point?: RestorePoint;
  /** The backup taken for this round, while it is taken (its operation), when a new one was needed. */
  backup?: { operation_id: string | null; status: 'sending' | 'accepted' | 'succeeded' | 'failed' | 'unknown' };
  /**
   * `sending` (journaled before the write left), `accepted`, then `healthy` or `broken` once checked;
   * `failed`: the write or its operation failed (nothing learnt: isolation stops); `unknown`.
   */
  status: 'sending' | 'accepted' | 'healthy' | 'broken' | 'failed' | 'unknown';
  /** The round's write operations; journaled empty right before the write leaves: a `sending` round without it was never sent. */
  operation_ids?: string[];
  health?: HealthRecord;
  /** The visual check's outcome for the round, when the task has one. */
  visual?: VisualRecord['outcome'];
  reason?: string;
  /** A broken round's restore. */
  restored?: Restored;
  /** `health.undo: items_first`: a round that breaks the site goes back by its items' own files (`undone`), so it takes no restore point. */
  by_items?: true;
  /** A broken round's items put back by their own files; a restore follows only when the site stays broken. */
  undone?: UndoneByItems;
  /** The fatal error line the log showed after this round broke the site. */
  logged?: LoggedError;
  /**
   * Backups sitefleet made that were removed to make room for the round's backup: journaled with its
   * backup's `sending` record (a kill among the removals loses them here; the log keeps each).
   */
  room?: BackupSlots['removed'];
}

/**
 * Why a step is held when its environment's page cache could not be cleared (`health.clear_cache`):
 * the check after the write saw a healthy page, but it may be the one a cache kept from before the
 * write, so no one has seen the page visitors will get. It always counts against the failure budget:
 * a rollout must not go on across a fleet whose pages it cannot see.
 */
export interface CacheHeldReason {
  code: 'cache_not_cleared';
  /** The page that was checked. */
  url: string;
  /** What the clear ran into. */
  detail: string;
  /** What to do. */
  override: string;
  counts_against_budget: true;
}

/**
 * Why a guarded write was not sent (`health.when_broken_before: hold`, the default): its page could
 * not be seen healthy before it. `unseen`: no answer at all (DNS, a refused connection, a timeout,
 * TLS), most often a `health.url` that reaches no site; `broken_before`: it answered, but not healthy
 * (4xx, 5xx, or a text of `not_contains`). Nothing was sent, so nothing was learnt of the write. It
 * always counts against the failure budget: a template that reaches no site stops the rollout at its
 * canary instead of updating the fleet unchecked.
 */
export interface BeforeHeldReason {
  code: 'unseen' | 'broken_before';
  /** The page looked at. */
  url: string;
  /** What the look before saw: `could not fetch: ECONNREFUSED (3 attempts)`, `HTTP 500, page says …`. */
  detail: string;
  /** What to do. */
  override: string;
  counts_against_budget: true;
}

/**
 * `no_backup_slot`: the environment holds as many manual backups as it keeps
 * (`settings.manual_backup_slots`), and none is sitefleet's to remove (run/backup-slots.ts): the
 * backup was not asked for, and the write it guards was not sent. A person frees a slot.
 */
export interface NoSlotHeld {
  code: 'no_backup_slot';
  /** The environment's id. */
  environment: string;
  /** How many manual backups it holds, and its slots. */
  detail: string;
  override: string;
  counts_against_budget?: undefined;
}

/**
 * `not_read_back`: the write's operation ended, and the listing it is read back from could not be
 * read (after its retries): nobody saw the environment run the new version, so the write is not done.
 * It counts against the failure budget: a rollout does not go on across writes it cannot see land.
 */
export interface NotReadBack {
  code: 'not_read_back';
  /** Why the listing could not be read. */
  detail: string;
  override: string;
  counts_against_budget: true;
}

/** One command of a write's database step, as journaled before it left and at each turn after. */
/**
 * What a backup step did to its environment's manual backup slots, so a person can see which backups
 * went: `removed`, each with why (`room`: to make room before it was sent; `judged`: a night's restore
 * point or round whose writes were judged healthy; `keep`: beyond `keep`'s newest); `kept`: the newest
 * of its series `keep` kept; `earlier`: the backups with its tag an earlier run left (never its restore point).
 */
export interface BackupSlots {
  removed: { id: number; tag: string; why: 'room' | 'judged' | 'keep' }[];
  kept?: number[];
  earlier?: number[];
}

export interface DatabaseRun {
  /** The command, a constant of database-step.ts: nothing from the service enters it. */
  command: string;
  /** `update`: after the write's operation succeeded; `restore`: after a restore put the environment back. */
  after: 'update' | 'restore';
  /** `sending` (journaled before it left; safe to send again), `accepted`, `succeeded`, `failed`, `unknown`, `not sent` (a halt came first). */
  status: 'sending' | 'accepted' | 'succeeded' | 'failed' | 'unknown' | 'not sent';
  operation_id: string | null;
  reason?: string;
}

/**
 * `database_not_updated`: the write moved the site, and its database step (`wp core update-db`, an
 * item's own) did not succeed: its dashboard may say "Database update required". Counted against the
 * failure budget: a rollout does not go on across sites left half updated.
 */
export interface DatabaseHeld {
  code: 'database_not_updated';
  /** Each command that did not succeed, with its status and why. */
  detail: string;
  override: string;
  counts_against_budget: true;
}

/** A step held before its write: nothing was sent (no write to read back, to undo, or to judge). */
export function isHeldBefore(result: Pick<StepResult, 'status' | 'held'>): boolean {
  const code = result.held?.code;
  return result.status === 'held' && (code === 'unseen' || code === 'broken_before' || code === 'no_backup_slot');
}

/**
 * Why a step is held. `visual_difference`: a page looks different after the write by more than
 * `hold_over`. `visual_unchecked`: a page could not be looked at (no screenshot before or after the
 * write), so the write is not known to have left it as it was: a check that could not look never passes.
 */
export type HeldReason = VisualDifference | VisualUnchecked;

/**
 * `not_looked`: the write's operation ended, and the run halted (a second stop, `settings.finish_within`
 * run out, a rejected token) before its site was looked at: not done, since nobody saw the site after
 * it. `sitefleet resume` clears the cache and looks, and the step ends as that look says.
 */
export interface NotLooked {
  code: 'not_looked';
  url: string;
  /** Why the run halted. */
  detail: string;
  override: string;
  /** Never: nothing says the write did wrong, and the resume's look is what counts. */
  counts_against_budget?: undefined;
}

interface HeldCommon {
  /** The page that changed most, or the first page not looked at. */
  url: string;
  /** What to do to accept it, or to let such a change pass next time. */
  override: string;
  /** The task says `fail_on_hold`: this held step counts against its failure budget (and a resume's). */
  counts_against_budget?: true;
}

export interface VisualDifference extends HeldCommon {
  code: 'visual_difference';
  /** The most a page changed, in percent of the page (3.2 for 3.2%). */
  changed_percent: number;
  /** Its diff image, relative to the report's folder; null when it could not be written. */
  diff: string | null;
}

export interface VisualUnchecked extends HeldCommon {
  code: 'visual_unchecked';
  /** How many of the step's pages were not looked at. */
  unchecked: number;
  /** Why the first of them was not. */
  detail: string;
}

/** A page's verdict: as it was, changed (over hold_over), broken (over restore_over, blank, half its height), or not looked at. */
export type PageVerdict = 'same' | 'changed' | 'broken' | 'not checked';

export interface VisualPage {
  url: string;
  verdict: PageVerdict;
  /** Share of the page that changed, in percent, after the page's own noise was masked. */
  changed_percent?: number;
  /** Share of the page that differed between the two screenshots before the write, in percent. */
  noise_percent?: number;
  /** The two screenshots before the write differed by more than hold_over: this page's verdict is advice only. */
  unstable?: true;
  /** `blank page`, `height 1800 → 600 px`, or why it was not compared. */
  detail?: string;
  /** The screenshots, the noise mask and the diff, relative to the report's folder: kept for pages not `same`. */
  images?: { before: string; after: string; mask: string; diff: string };
}

export interface VisualRecord {
  /** `passed`: every page as it was (or unstable); `held`: one changed; `broken`; `not checked`: one was not looked at (held, visual_unchecked). */
  outcome: 'passed' | 'held' | 'broken' | 'not checked';
  pages: VisualPage[];
}

/**
 * Where a restore stands: `sending` is journaled before the request leaves, so a run that dies then
 * reads it back as `unknown` and never sends it again; `not sent` says why it was not (no backup id,
 * the run interrupted). `health` is the check after the restore's operation.
 */
export type RestoreStatus = 'sending' | 'accepted' | 'succeeded' | 'failed' | 'unknown' | 'not sent';

/** One WP-CLI command that puts an item back, as it went: journaled `sending` before it leaves. */
export interface UndoCommand {
  /** The item put back and the version it is put back to: the one the write replaced. */
  kind: 'theme' | 'plugin' | 'core';
  name: string;
  version: string;
  wp_command: string;
  status: 'sending' | 'accepted' | 'succeeded' | 'failed' | 'unknown' | 'not sent';
  operation_id: string | null;
  reason?: string;
}

/**
 * A broken site put back by its items' own files (run/life/undo-items.ts): `sending` while its commands
 * go (a resume sends those not seen to succeed again: each only writes one version's files, so it is
 * safe to repeat), `succeeded` when all of them did (then `health`: what the site said after), `failed`
 * or `not sent` (with why) when it could not be done: then the backup is restored.
 */
export interface UndoneByItems {
  status: 'sending' | 'succeeded' | 'failed' | 'not sent';
  commands: UndoCommand[];
  reason?: string;
  health?: Restored['health'];
}

export interface Restored {
  backup_id: number | null;
  operation_id: string | null;
  status: RestoreStatus;
  reason?: string;
  /**
   * After a succeeded restore, what the site's page said: `healthy`, or `unhealthy` with what it
   * showed; `not checked` when the task checks no page, or when a healthy answer came through a page
   * cache that could not be cleared first (`cache`).
   */
  health?: { outcome: 'healthy' | 'unhealthy' | 'not checked'; detail?: string; cache?: CacheClear };
}

/**
 * `healthy` (after the write; whatever it was before), `unhealthy` (broken after, fine before: the
 * step failed), `unhealthy before` (not seen healthy before the write: not blamed on it; with nothing
 * sent, the step held, unless `when_broken_before: update`), `not checked` (the
 * operation did not succeed, or the run stopped first; or the page cache was not cleared, so the
 * healthy page seen may be the one kept from before the write: the step is held).
 */
export type HealthOutcome = 'healthy' | 'unhealthy' | 'unhealthy before' | 'not checked';

export interface HealthRecord {
  url: string;
  outcome: HealthOutcome;
  /** `health.clear_cache`: the environment's page cache, cleared through the service before the check after the write, or not. */
  cache?: CacheClear;
  /** The baseline's detail, e.g. `HTTP 200`. */
  before?: string;
  /** The check after the operation, e.g. `HTTP 500, page says "There has been a critical error on this website"`. */
  after?: string;
}

/**
 * A clear of an environment's page cache: its operation, and why it did not clear when it did not.
 * `not available`: the service refused it as missing (404, 405: no cache tool for this environment or
 * this account): the look goes on without it, and the run says so once.
 */
export interface CacheClear {
  outcome: 'cleared' | 'not cleared' | 'not available';
  /** The clear's operation, when the service accepted one. */
  operation_id?: string;
  /** Why it did not clear: refused, missing, its operation failed or was not seen to end, the run stopped. */
  detail?: string;
}

export interface RestorePoint {
  tag: string;
  /** The backup's id in the environment's backup list; null when the list did not show it. */
  backup_id: number | null;
  /** When the backup was made, as the list dated it (ISO 8601): what a restore loses is what the site did since. */
  taken_at?: string;
}

/**
 * Why a run stopped early: a 401, a crossed failure budget, a signal, lost coordination, the
 * service refusing with 429 for longer than `--rate-limit-wait` (another client holds the budget),
 * or its maintenance window closing with steps not sent.
 */
export type StopKind = 'auth' | 'budget' | 'interrupted' | 'coordination' | 'rate_limited' | 'window';

export type RunEvent =
  | { type: 'attempt'; step: Step; attempt: number }
  /** The answer to a step's call. */
  | { type: 'result'; step: Step; result: StepResult }
  /** A later word on an ended step: its operation finished, or verify found the work not done. */
  | { type: 'update'; step: Step; result: StepResult }
  | { type: 'stopped'; kind: StopKind; reason: string }
  /** A restore point's room, made before it is asked for: journaled at once (journal.ts, `room`). */
  | { type: 'room'; step: Step; slots: BackupSlots };

export interface ExecuteOutcome {
  results: Map<string, StepResult>;
  /** Why the run stopped early: authentication, failure budget, interruption. */
  stopped?: { reason: string; kind: StopKind };
}

/** Statuses after which a step is not sent again. `skipped` is not one: it means "never sent". */
export const ENDED_STATUSES: ReadonlySet<StepStatus> = new Set(['accepted', 'succeeded', 'failed', 'held', 'unknown']);
