import type { Coordination } from '../coord/types.js';
import type { Logger } from 'pino';
import type { Inventory } from '../inventory/inventory.js';
import { backoffOf, type Withholding } from '../inventory/withheld.js';
import { retriesGoneOf, supersededOf } from '../inventory/withheld-prune.js';
import type { Plan } from '../plan/plan.js';
import type { PlaybookSettings } from '../playbook/types.js';
import type { ReportResult } from '../report/report.js';
import type { StepResult } from '../run/types.js';
import { breaksOf, kindOf, retriesOf, type WriteEnd } from '../run/write-ends.js';
import { forTerminal } from '../util/safe-text.js';
import type { RunScope } from './run-scope.js';

/**
 * What the planner withholds updates by: the company's quarantine and retries as they stand, read
 * before the plan. What the inventory shows the fleet has moved past is folded away first, written
 * as a release (`superseded_by`) or a clear with its `why` (inventory/withheld-prune.ts), so neither
 * store only grows: the Redis hashes drop it at once, the files at their compaction. Plans and dry
 * runs write too, as they record first-seen sightings: an entry that means nothing is not a write to
 * the fleet.
 */
export async function withholdingOf(
  coordination: Pick<Coordination, 'quarantine' | 'retries'>,
  inventory: Inventory,
  settings: PlaybookSettings,
  now: number,
  logger: Pick<Logger, 'info'>,
): Promise<Withholding> {
  const backoff = backoffOf(settings.retry_backoff);
  const quarantineStore = coordination.quarantine(inventory.company);
  let quarantine = await quarantineStore.record([]);
  const superseded = supersededOf(quarantine, inventory, now);
  if (superseded.length > 0) {
    quarantine = await quarantineStore.record(superseded);
    // Counts only: the names are the service's text, and `quarantine list` shows what still holds.
    logger.info({ superseded: superseded.length }, 'quarantine: versions the fleet moved past folded away');
  }
  const retryStore = coordination.retries(inventory.company);
  let retries = await retryStore.record([]);
  const gone = retriesGoneOf(retries, inventory, backoff, now);
  if (gone.length > 0) {
    retries = await retryStore.record(gone);
    logger.info({ cleared: gone.length }, 'retries: failures that mean nothing any more cleared');
  }
  return { now, quarantine, retries, backoff };
}

/** A plan's writes with their results (a step with no result ended nowhere). */
export function writeEndsOf(plan: Plan, results: ReadonlyMap<string, StepResult>): WriteEnd[] {
  return plan.steps.flatMap((step) => {
    const result = results.get(step.id);
    if (!result || step.role) return [];
    // A write the run's quarantine trimmed carried what it sent, not the plan's updates.
    const { action, target } = step;
    const { body, precondition, updates } = result.sent ?? step;
    return [{ action, target, body, precondition, updates, alone: step.joins === undefined, result }];
  });
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

/**
 * What a run's item writes came to, in the company's quarantine (a version that broke a site) and
 * retries (a failure that may pass; a success clears): called where staging's ends are recorded
 * (the run, a resume, status). An end recorded again changes nothing (a break per environment and
 * version, a failure per run).
 *
 * A retry counts from when its run began (`runAt`), not from when it is recorded: the backoff's waits
 * are nights, and tomorrow's run, begun at tonight's hour, is planned before tonight's run ended (with
 * the end, a one-day wait skipped a night). A break is recorded as now: a release made meanwhile must not fold it away.
 */
async function recordWithheld(scope: RunScope, company: string, runId: string, ended: readonly WriteEnd[], runAt: number): Promise<void> {
  const at = scope.globals.io.now();
  const breaks = ended.flatMap((e) => breaksOf(e, at));
  if (breaks.length > 0) await scope.coordination.quarantine(company).record(breaks);
  const store = scope.coordination.retries(company);
  const table = await store.record([]);
  const entries = ended.flatMap((e) => retriesOf(e, runId, Math.min(runAt, at), (env, kind, name) => table.failed(env, kind, name)));
  if (entries.length > 0) await store.record(entries);
}

/** recordWithheld, and a warning when a store cannot take it: the report stands whatever happens to that record. */
export async function recordWithheldOrWarn(scope: RunScope, company: string, runId: string, ended: readonly WriteEnd[], runAt: number): Promise<void> {
  const writes = ended.filter((e) => kindOf(e) !== undefined);
  if (writes.length === 0) return;
  try {
    await recordWithheld(scope, company, runId, writes, runAt);
  } catch (error) {
    const message = `could not record what the item updates came to in the quarantine and retries (${(error as Error).message}): a version that broke a site may be sent again`;
    scope.globals.io.stderr.write(`sitefleet: warning: ${forTerminal(message)}\n`);
  }
}
