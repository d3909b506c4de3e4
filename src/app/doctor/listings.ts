import { HttpError } from '../../errors.js';
import { KIND_TABLE, KINDS, type Kind } from '../../inventory/kinds.js';
import type { InventoryReader } from '../../inventory/read.js';
import type { Check } from './check.js';

/** Entries one read asks for: enough to see whether the listing names its environments. */
const PROBE = 100;

/**
 * Whether a kind's company listing can be planned from, learned from one read of its first page: the
 * service serves it, and its entries name their environments. Where it cannot, a run reads each
 * selected environment's own listing, one read per environment through the budget: a warning when the
 * playbook (or, without one, any playbook) may update that kind, a note when the playbook given does not.
 */
async function listingCheck(reader: InventoryReader, company: string, kind: Kind, updated: boolean): Promise<Check> {
  const row = KIND_TABLE[kind];
  const check = `${kind} listing`;
  const cost = `a ${kind} task reads each environment's own listing, one read per environment it selects`;
  let why: string;
  try {
    const page = await reader.listItems(kind, company, { offset: 0, limit: PROBE });
    const unnamed = page.items.filter((item) => (item.environments ?? []).some((e) => typeof e.id !== 'string' || e.id === '')).length;
    if (unnamed === 0) return { check, status: 'ok', detail: `the company ${kind} listing is served: ${page.total} ${row.plural}, one read a page` };
    why = `the company ${kind} listing names no environment id for ${unnamed} of its first ${page.items.length} entries`;
  } catch (error) {
    if (!(error instanceof HttpError && error.status === 404)) throw error;
    why = `the service does not serve the company ${kind} listing (404)`;
  }
  return updated
    ? { check, status: 'warn', detail: `${why}: ${cost}` }
    : { check, status: 'ok', detail: `${why}; no task of this playbook updates ${row.plural}` };
}

/** One check per kind read from environments where its company listing fails (plugins), after the theme listing's. */
export async function listingChecks(reader: InventoryReader, company: string, updates: ((kind: Kind) => boolean) | undefined): Promise<Check[]> {
  const checks: Check[] = [];
  for (const kind of KINDS.filter((k) => KIND_TABLE[k].environmentListing))
    checks.push(await listingCheck(reader, company, kind, updates ? updates(kind) : true));
  return checks;
}
