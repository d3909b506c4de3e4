import type { Coordination } from '../coord/types.js';
import type { Logger } from 'pino';
import type { Inventory } from '../inventory/inventory.js';
import { backoffOf, type Withholding } from '../inventory/withheld.js';
import { retriesGoneOf, supersededOf } from '../inventory/withheld-prune.js';
import type { Plan } from '../plan/plan.js';
import type { PlaybookSettings } from '../playbook/types.js';
import type { QuarantineBreak } from '../inventory/quarantine-table.js';
import { breaksOfEntries } from '../report/quarantined.js';
import type { Report, ReportResult } from '../report/report.js';
import type { StepResult } from '../run/types.js';
import { breaksOf, kindOf, retriesOf, writeEndOf, type WriteEnd } from '../run/write-ends.js';
import { forTerminal } from '../util/safe-text.js';
import { unreadWhat, type UnreadLine } from '../inventory/unread-line.js';
import type { RunScope } from './run-scope.js';

/**
 * What the planner withholds updates by: the company's quarantine and retries as they stand, read
 * before the plan. What the inventory shows the fleet has moved past is folded away first, written
 * as a release (`superseded_by`) or a clear with its `why` (inventory/withheld-prune.ts), so neither
 * store only grows: the Redis hashes drop it at once, the files at their compaction. Plans and dry
 * runs write too, as they record first-seen sightings: an entry that means nothing is not a write to
 * the fleet. A line of either store that cannot be read is said in a warning (`warn`) naming it, and
 * holds what it names (inventory/unread-line.ts).
 */
export async function withholdingOf(
  coordination: Pick<Coordination, 'quarantine' | 'retries'>,
  inventory: Inventory,
  settings: PlaybookSettings,
  now: number,
  logger: Pick<Logger, 'info'>,
  warn: (line: string) => void = () => undefined,
): Promise<Withholding> {
  const backoff = backoffOf(settings.retry_backoff);
  const quarantineStore = coordination.quarantine(inventory.company);
  let quarantine = await quarantineStore.record([]);
  for (const line of quarantine.unread) warn(unreadWarning('quarantine', line));
  const superseded = supersededOf(quarantine, inventory, now);
  if (superseded.length > 0) {
    quarantine = await quarantineStore.record(superseded);
    // Counts only: the names are the service's text, and `quarantine list` shows what still holds.
    logger.info({ superseded: superseded.length }, 'quarantine: versions the fleet moved past folded away');
  }
  const retryStore = coordination.retries(inventory.company);
  let retries = await retryStore.record([]);
  for (const line of retries.unread) warn(unreadWarning('retry', line));
  const gone = retriesGoneOf(retries, inventory, backoff, now);
  if (gone.length > 0) {
    retries = await retryStore.record(gone);
    logger.info({ cleared: gone.length }, 'retries: failures that mean nothing any more cleared');
  }
  return { now, quarantine, retries, backoff };
}

/** A store's line that cannot be read, and what it holds, as a warning says it (the line's text is not quoted: where it is is enough). */
export function unreadWarning(store: 'quarantine' | 'retry', line: UnreadLine): string {
  const what = unreadWhat(line, store === 'retry');
  const record = store === 'quarantine' ? "the company's quarantine" : "the company's retries";
  const holds =
    store === 'quarantine'
      ? what
        ? `${what} is held on every environment`
        : 'it names nothing that can be told, so every item update is held'
      : what
        ? `${what} is held`
        : 'it names nothing that can be told and holds nothing: a write waiting its backoff may be sent again sooner';
  return `${line.where}: a line of ${record} that cannot be read (${line.why}): ${holds}, until someone repairs or deletes the line`;
}

/** A plan's writes with their results (a step with no result ended nowhere). */
export function writeEndsOf(plan: Plan, results: ReadonlyMap<string, StepResult>): WriteEnd[] {
  return plan.steps.flatMap((step) => {
    const result = results.get(step.id);
    return !result || step.role ? [] : [writeEndOf(step, result)];
  });
}

/**
 * What a report says broke a site, each dated when it happened: its `quarantined` (the run's journal's
 * times). Without it (none found, or a report of an older release, or one written while its run went
 * on), what its results show is dated by when the report was written, as that release recorded
 * them: never by when it is read again.
 */
export function reportBreaks(report: Report): QuarantineBreak[] {
  if (report.quarantined) return breaksOfEntries(report.quarantined);
  const at = Date.parse(report.finished_at);
  return writeEndsOfReport(report.results).flatMap((e) => breaksOf(e, at));
}

/**
 * A report's writes (`status`): whether a write went alone in its turn is not in a report, so a
 * restored pinned write names no version from here (its run named it as it ended: a restore happens
 * in a run, never in `status`); what isolation found, and failures and successes, are recorded.
 */
export function writeEndsOfReport(results: readonly ReportResult[]): WriteEnd[] {
  return results.flatMap((r) =>
    r.request && !r.role ? [{ action: r.action, target: r.target, body: r.request.body, precondition: r.precondition, alone: false, result: r }] : [],
  );
}

/** What a run's item writes came to, as `recordWithheldOrWarn` records it (the run, a resume, `status`). */
export interface RunEnds {
  company: string;
  runId: string;
  /** The run's writes with their results. */
  ended: readonly WriteEnd[];
  /** When the run began: what its retries count from. */
  runAt: number;
  /** What broke a site, each dated when it happened (reportBreaks). */
  breaks: readonly QuarantineBreak[];
}

/**
 * What a run's item writes came to, in the company's quarantine (a version that broke a site) and
 * retries (a failure that may pass; a success clears): called where staging's ends are recorded
 * (the run, a resume, status). An end recorded again changes nothing (a break per environment and
 * version, a failure per run), and undoes nothing: each is dated when it happened, never when it is
 * recorded, so a release or a clear made since folds it away again.
 *
 * A break is dated when the run's journal first showed it (`breaks`: reportBreaks). A retry counts
 * from when its run began (`runAt`): the backoff's waits are nights, and tomorrow's run, begun at
 * tonight's hour, is planned before tonight's run ended (with the end, a one-day wait skipped a night).
 */
async function recordWithheld(scope: RunScope, { company, runId, ended, runAt, breaks }: RunEnds): Promise<void> {
  const at = scope.globals.io.now();
  if (breaks.length > 0) await scope.coordination.quarantine(company).record(breaks);
  const store = scope.coordination.retries(company);
  const table = await store.record([]);
  const entries = ended.flatMap((e) => retriesOf(e, runId, Math.min(runAt, at), (env, kind, name) => table.failed(env, kind, name)));
  if (entries.length > 0) await store.record(entries);
}

/** recordWithheld, and a warning when a store cannot take it: the report stands whatever happens to that record. */
export async function recordWithheldOrWarn(scope: RunScope, ends: RunEnds): Promise<void> {
  const writes = ends.ended.filter((e) => kindOf(e) !== undefined);
  if (writes.length === 0 && ends.breaks.length === 0) return;
  try {
    await recordWithheld(scope, { ...ends, ended: writes });
  } catch (error) {
    const message = `could not record what the item updates came to in the quarantine and retries (${(error as Error).message}): a version that broke a site may be sent again`;
    scope.globals.io.stderr.write(`sitefleet: warning: ${forTerminal(message)}\n`);
  }
}
