import { readsBackStep, type Action, type ReadBack, type StepOutcome } from '../actions/action.js';
import type { Inventory } from '../inventory/inventory.js';
import { KIND_TABLE, BASE_KIND } from '../inventory/kinds.js';
import { inventoryReader, readEnvironmentItems, readInventory, readKind } from '../inventory/read.js';
import type { Step } from '../plan/plan.js';
import type { CallPort } from './caller.js';
import { SitefleetError } from '../errors.js';
import { isHeldBefore, type StepResult } from './types.js';

/** What a read back reads of a step: a plan's step, or (`status`, without its journal) a report's write. */
export type JudgedStep = StepOutcome & Pick<Step, 'id'>;

/**
 * Once a task's operations ended, read the listing again (one read for the task, or one per
 * environment for a kind whose company listing lags: see listingFor) and judge its steps. Every step
 * the action reads back (`readBack`: every item write) is read whatever `verify` says, held or not (a
 * held write happened): what the environment runs is recorded on the step; one still on the version it
 * replaced fails `not_updated`, one on another version than was judged fails saying which. A step the
 * listing already confirmed (`confirmed_by: "listing"`) was read by the same rule and is not read again,
 * unless the action wants its `runs` (`readsBackConfirmed`). `verify: true` adds the action's own rule
 * (`verify`: the listing shows no update left) for the steps that accepted or succeeded.
 */
export async function verifyTask<S extends JudgedStep>(
  action: Action,
  caller: CallPort,
  company: string,
  steps: S[],
  results: Map<string, StepResult>,
  verify: boolean,
): Promise<[S, StepResult][]> {
  const ended = (s: S) => results.get(s.id)?.status === 'succeeded' || results.get(s.id)?.status === 'accepted';
  // A held step's write happened too (its page is what a person must look at): what it installed is read back as well;
  // not one held before its write (nothing was sent).
  const held = (s: S) => results.get(s.id)?.status === 'held' && !isHeldBefore(results.get(s.id)!);
  const confirmed = (s: S) => results.get(s.id)?.confirmed_by === 'listing';
  // Only a write whose operation ended can be read back: one accepted and not waited for may not have run yet,
  // and reading it now would call the environment behind what was judged when it is merely not there yet.
  const over = (s: S) => results.get(s.id)?.status === 'succeeded' || held(s);
  const reads = (s: S) => over(s) && readsBackStep(action, s) && (!confirmed(s) || action.readsBackConfirmed?.(s) === true);
  const judged = steps.filter((s) => (ended(s) && verify && action.verify && !confirmed(s)) || reads(s));
  if (judged.length === 0) return [];
  let listing: Inventory;
  try {
    listing = await listingFor(action, caller, company, judged);
  } catch (error) {
    if (!(error instanceof SitefleetError)) throw error;
    // A read that could not look never passes: each write it was to judge that stood as done is held, not done
    // (one held already keeps its own hold and what to do about it; one accepted, not waited for, stays so).
    return judged.filter((step) => results.get(step.id)?.status === 'succeeded').map((step) => [step, notReadBack(results.get(step.id)!, error.message)]);
  }
  const changed: [S, StepResult][] = [];
  for (const step of judged) {
    const result = results.get(step.id)!;
    // What was sent is what is judged: a write the run's quarantine trimmed is read back for the items it carried.
    const back = reads(step) ? action.readBack!({ ...step, ...result.sent }, listing) : undefined;
    const reason = back?.differs ?? (verify ? action.verify?.(step, listing) : undefined);
    if (back === undefined && reason === undefined) continue;
    changed.push([step, judgedResult(result, back, reason)]);
  }
  return changed;
}

function notReadBack(result: StepResult, why: string): StepResult {
  return {
    ...result,
    status: 'held',
    held: {
      code: 'not_read_back',
      detail: why,
      override: 'see what the environment runs (`sitefleet inventory`): a write that did not land is offered again by the next plan',
      counts_against_budget: true,
    },
    reason: `not_read_back: the listing could not be read after the write (${why}), so nobody saw the environment run the new version`,
  };
}

/** A step's result once read back: what it runs recorded, and failed where the read back or `verify` found the work not done. */
function judgedResult(result: StepResult, back: ReadBack | undefined, reason: string | undefined): StepResult {
  const runs = back ? { runs: back.runs } : {};
  if (reason === undefined) return { ...result, ...runs };
  // Another version than was judged is a failure whatever the page showed: the hold's reason gives way to it.
  const { held: _held, ...sent } = result;
  if (back?.stays?.length) return { ...sent, ...runs, status: 'failed', reason, failure: { code: 'not_updated', stays: back.stays } };
  return { ...sent, ...runs, status: 'failed', reason: `verify: ${reason}` };
}

/**
 * The listing the judged steps are read against: the company listing of the action's kind, or where
 * that listing may lag behind a write (plugins: `listingConfirms` false), each judged environment's own
 * listing, one read each.
 */
async function listingFor(action: Action, caller: CallPort, company: string, judged: JudgedStep[]): Promise<Inventory> {
  const reader = inventoryReader(caller);
  const kind = action.items ?? BASE_KIND;
  const row = KIND_TABLE[kind];
  // WordPress: the site listing, one read for the fleet, is all there is to read it back from.
  if (row.readBackFrom === 'sites') {
    const listing: Inventory = { company, environments: [], listed: {} };
    await readKind(reader, listing, kind);
    return listing;
  }
  if (row.readBackFrom === 'company') {
    const listing = await readInventory(reader, company);
    if (kind !== BASE_KIND) await readKind(reader, listing, kind);
    return listing;
  }
  const envIds = [...new Set(judged.flatMap((s) => (s.target.env_id ? [s.target.env_id] : [])))];
  const listing: Inventory = { company, environments: envIds.map((id) => ({ id, site: '', name: '', items: {} })), listed: {} };
  await readEnvironmentItems(reader, listing, kind, envIds);
  return listing;
}
