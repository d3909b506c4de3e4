import type { Target } from '../actions/action.js';
import type { StepResult } from './types.js';
import { breaksOf, writeEndOf } from './write-ends.js';
import { ACTIONS } from '../actions/index.js';
import { ITEM_WRITES } from '../actions/item-writes.js';
import { writtenUpdates } from '../actions/items-update.js';
import { itemKey, itemOf, nameOf, type Kind } from '../inventory/kinds.js';
import type { Step } from '../plan/plan.js';
import { versionKey } from '../util/item-version.js';

/**
 * The updates isolation found to break a site during this run: sent nowhere else in it. A later
 * write that carries one leaves it out (a bulk update of the others), or is not sent when it carries
 * nothing else. Across runs, the company's quarantine store says the same to every plan; this is the
 * run's own, for the waves and tasks after the breakage, and for a resume (seeded from its journal).
 * It covers every write of the run, of every task: a write's updates are read from what its step
 * keeps (writtenUpdates: isolation's list, else a pinned body, else the bulk body's names with the
 * versions its precondition judged), since only a task that isolates keeps the list on its steps.
 * Versions are keyed as the stores key them (`6.0` and `6.0.0` are one release).
 */
export class RunQuarantine {
  readonly #found = new Map<string, string>();

  /**
   * A write as it ended: the versions it shows broke its site (write-ends.ts `breaksOf`: the culprits
   * isolation found, a pinned write that broke its site and was put back) are sent nowhere after.
   */
  addEnd(step: Step, result: StepResult): void {
    for (const b of breaksOf(writeEndOf(step, result), 0)) {
      const item = itemOf(b)!;
      const key = keyOf(item.kind, item.name, b.version);
      if (!this.#found.has(key)) this.#found.set(key, placeOf(step.target));
    }
  }

  /** The step as it may still go: its quarantined updates left out, said in its note; or why it goes nowhere. */
  trim(step: Step): { step: Step } | { skip: string } {
    const kind = ACTIONS.get(step.action)?.items;
    if (!kind || this.#found.size === 0) return { step };
    const updates = writtenUpdates(kind, step);
    const out = updates.filter((u) => this.#found.has(keyOf(kind, nameOf(u), u.to)));
    if (out.length === 0) return { step };
    const why = out.map((u) => `${nameOf(u)} ${u.to} (it broke ${this.#found.get(keyOf(kind, nameOf(u), u.to))})`).join(', ');
    const writes = ITEM_WRITES[kind];
    const kept = updates.filter((u) => !out.includes(u));
    if (kept.length === 0 || !writes.bulk || writes.pinnedOf(step.body))
      return { skip: `quarantined: not sent, found to break a site earlier in this run: ${why}` };
    const note = `left out, quarantined in this run: ${why}`;
    return {
      step: {
        ...step,
        body: writes.bulk(step.target.env_id!, kept.map(nameOf)).body,
        updates: kept,
        // The versions the write moves between, as the plan words them (items-update.ts), of what it still carries.
        precondition: kept.map((u) => `${nameOf(u)} ${u.from} → ${u.to}`).join(', '),
        note: step.note ? `${note}; ${step.note}` : note,
        trimmed: true,
      },
    };
  }
}

function keyOf(kind: Kind, name: string, version: string): string {
  return `${itemKey(kind, name)}\u0000${versionKey(version)}`;
}

/** Where a breakage happened, in a site's own words (service text: shown only through safe-text). */
function placeOf(target: Target): string {
  return [target.site, target.environment].filter(Boolean).join(' ') || target.env_id || 'a site';
}
