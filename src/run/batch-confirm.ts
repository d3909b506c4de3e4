import type { BatchConfirm, StepOutcome } from '../actions/action.js';
import type { Environment, Inventory } from '../inventory/inventory.js';
import { KINDS } from '../inventory/kinds.js';
import { inventoryReader, readInventory } from '../inventory/read.js';
import type { CallPort } from './caller.js';
import type { Priority } from './rate-budget.js';
import { systemClock, type Clock } from '../util/clock.js';
import type { DurationModel } from './duration-model.js';
import type { Logger } from 'pino';

/** How a followed operation ends here: settled by the listing, or handed to the Watcher to be polled. */
export type Settled = 'listing' | 'poll';

export interface ConfirmerOptions {
  /**
   * One read of the listing filtered by each search term ([]: the whole listing), merged; `urgent`
   * when something waits for one of the operations. Undefined when the read failed.
   */
  read(searches: string[], urgent: boolean): Promise<Inventory | undefined>;
  /** The Watcher's model: what its probes learn of how long each kind takes. */
  model: DurationModel;
  /** @default the system clock */
  clock?: Clock;
  /** Ctrl-C, a 401, a crossed budget: every pending operation goes to the Watcher (which stops too). @default none */
  signal?: AbortSignal;
  /** Operations of a kind handed to the Watcher at once while nothing is known of the kind: its probes. @default 3 */
  probes?: number;
  /** The shortest gap between two reads of one kind's listing. @default 1000 */
  minGapMs?: number;
  /** A kind still unlearned is looked at again after this long; each look hands more operations to the Watcher (1, 2, 4…). @default 1000 */
  recheckMs?: number;
}

interface Entry {
  step: StepOutcome;
  acceptedAt: number;
  /** Wall time (ms since the epoch) of acceptance, to hold the listing's `last_updated_at` against. */
  acceptedWall: number;
  /** Give up on the listing (and poll) this long after acceptance. */
  timeoutMs: number;
  /** ms after acceptance of the last read that did not show it done (0: none yet). */
  notShownAt: number;
  urgent: boolean;
  resolve(how: Settled): void;
}

interface Group {
  confirm: BatchConfirm;
  entries: Set<Entry>;
  handedOut: number;
  /** Looks at an unlearned kind so far: each hands twice as many operations to the Watcher as the one before. */
  rechecks: number;
  timer?: unknown;
  /** When the timer fires (clock time). */
  timerAt: number;
  reading: boolean;
  lastReadAt: number;
}

/**
 * Confirms a batch of operations with one read of the listing instead of one poll each, for the
 * actions that say how (`confirmBatch`). The rule, per operation:
 *
 * - a read made after the moment its kind is predicted done (the Watcher's DurationModel) that shows
 *   its work, from a listing last updated after it was accepted, settles it: `succeeded`;
 * - a listing last updated before it was accepted (the service may serve a cached one) settles nothing
 *   about it, and the listing never settles a failure (its message is only in the operation's answer):
 *   a read after its predicted moment that does not settle it hands it to the Watcher, to be polled;
 * - while a kind is unlearned, a few of its operations go to the Watcher at once, as its probes; the
 *   others wait until the model predicts.
 *
 * Reads are timed for the earliest pending operation's predicted moment, no closer than `minGapMs`,
 * one at a time per kind, at poll priority (behind writes) unless something waits for one of them.
 * Each read teaches the model as a poll would (done between the last read that did not show an
 * operation and the one that did): the probes of a large task are polled only once its writes are
 * out, so what they teach alone is the writes' queue, not the operations' time.
 */
export class BatchConfirmer {
  readonly #groups = new Map<string, Group>();
  readonly #clock: Clock;
  readonly #probes: number;
  readonly #minGapMs: number;
  readonly #recheckMs: number;
  reads = 0;

  constructor(private readonly options: ConfirmerOptions) {
    this.#clock = options.clock ?? systemClock;
    this.#probes = options.probes ?? 3;
    this.#minGapMs = options.minGapMs ?? 1000;
    this.#recheckMs = options.recheckMs ?? 1000;
    options.signal?.addEventListener('abort', () => this.#handAll(), { once: true });
  }

  /** ms until the next listing read is due, or undefined when none is set. */
  nextReadIn(): number | undefined {
    let soonest = Infinity;
    for (const group of this.#groups.values()) if (group.timer !== undefined) soonest = Math.min(soonest, group.timerAt);
    return soonest === Infinity ? undefined : soonest - this.#clock.now();
  }

  /** Follows one accepted operation of `kind`; `expedite` when something waits for it. */
  settle(
    kind: string,
    confirm: BatchConfirm,
    step: StepOutcome,
    at: { acceptedAt: number; acceptedWall: number; timeoutMs: number },
  ): { done: Promise<Settled>; expedite(): void } {
    const group = this.#groups.get(kind) ?? {
      confirm,
      entries: new Set<Entry>(),
      handedOut: 0,
      rechecks: 0,
      timerAt: Infinity,
      reading: false,
      lastReadAt: -Infinity,
    };
    this.#groups.set(kind, group);
    let entry!: Entry;
    const done = new Promise<Settled>((resolve) => {
      entry = { step, ...at, urgent: false, notShownAt: 0, resolve };
    });
    if (this.options.signal?.aborted || (this.options.model.predict(kind) === undefined && group.handedOut < this.#probes)) {
      group.handedOut++;
      entry.resolve('poll');
    } else {
      group.entries.add(entry);
      // Operations arrive in acceptance order: a later one is rarely due before the read already set.
      const predicted = this.options.model.predict(kind);
      if (group.timer === undefined || predicted === undefined || at.acceptedAt + Math.min(predicted, at.timeoutMs) < group.timerAt)
        this.#schedule(kind, group);
    }
    return {
      done,
      expedite: () => {
        entry.urgent = true;
      },
    };
  }

  #schedule(kind: string, group: Group): void {
    if (group.reading || group.entries.size === 0) return;
    if (group.timer !== undefined) this.#clock.clearTimeout(group.timer);
    const now = this.#clock.now();
    const predicted = this.options.model.predict(kind);
    let at: number;
    if (predicted === undefined) {
      at = now + this.#recheckMs; // the probes have not taught anything yet
    } else {
      const due = Math.min(...[...group.entries].map((e) => e.acceptedAt + Math.min(predicted, e.timeoutMs)));
      at = Math.max(due, group.lastReadAt + this.#minGapMs);
    }
    group.timerAt = Math.max(now, at);
    group.timer = this.#clock.setTimeout(() => void this.#read(kind, group), Math.max(0, at - now));
  }

  async #read(kind: string, group: Group): Promise<void> {
    group.timer = undefined;
    group.timerAt = Infinity;
    const predicted = this.options.model.predict(kind);
    if (predicted === undefined) {
      // Probes that fail teach nothing: more operations become probes each look (1, 2, 4…), so a
      // kind that never succeeds is soon all polled, and its failures reported.
      group.rechecks++;
      for (const oldest of [...group.entries].slice(0, 2 ** (group.rechecks - 1))) this.#end(group, oldest, 'poll');
      return this.#schedule(kind, group);
    }
    const now = this.#clock.now();
    const due = new Set([...group.entries].filter((e) => now >= e.acceptedAt + Math.min(predicted, e.timeoutMs)));
    if (due.size === 0) return this.#schedule(kind, group);
    group.reading = true;
    group.lastReadAt = now;
    this.reads++;
    const entries = [...group.entries];
    const listing = await this.options.read(
      group.confirm.searches(entries.map((e) => e.step)),
      entries.some((e) => e.urgent),
    );
    group.reading = false;
    const updatedAt = listing?.last_updated_at === undefined ? NaN : Date.parse(listing.last_updated_at);
    for (const entry of entries) {
      if (!group.entries.has(entry)) continue;
      if (listing && updatedAt >= entry.acceptedWall && group.confirm.shows(entry.step, listing)) {
        // What a read teaches, as a poll would: done between the last read that did not show it and this one.
        this.options.model.record(kind, entry.notShownAt, now - entry.acceptedAt);
        this.#end(group, entry, 'listing');
      } else if (due.has(entry)) this.#end(group, entry, 'poll');
      else if (listing) entry.notShownAt = now - entry.acceptedAt;
    }
    this.#schedule(kind, group);
  }

  #end(group: Group, entry: Entry, how: Settled): void {
    group.entries.delete(entry);
    entry.resolve(how);
  }

  #handAll(): void {
    for (const group of this.#groups.values()) {
      if (group.timer !== undefined) this.#clock.clearTimeout(group.timer);
      for (const entry of [...group.entries]) this.#end(group, entry, 'poll');
    }
  }
}

/** Where the listing is read for a batch: the company, the caller, and the log its failures are told to. */
export interface ListingSource {
  caller: CallPort;
  company: string;
  logger: Logger;
}

/** Two reads' items of one environment, each kind's lists joined. */
function mergeItems(a: Environment, b: Environment): Environment['items'] {
  const merged: Environment['items'] = { ...a.items };
  for (const kind of KINDS) if (b.items[kind]) merged[kind] = [...(a.items[kind] ?? []), ...b.items[kind]];
  return merged;
}

/**
 * The listing filtered by each search term ([]: all of it), merged into one: an environment's items
 * from every read, and the oldest `last_updated_at` (what every part is at least as fresh as).
 * Undefined when a read failed, said in a log line: the operations are then polled, and each poll
 * reports what its operation did.
 */
export async function readListing(source: ListingSource, searches: string[], priority: Priority): Promise<Inventory | undefined> {
  const reader = inventoryReader(source.caller, priority);
  let parts: Inventory[];
  try {
    parts = await Promise.all(
      (searches.length === 0 ? [undefined] : searches).map((search) => readInventory(reader, source.company, 100, search === undefined ? {} : { search })),
    );
  } catch (error) {
    source.logger.warn({ err: (error as Error).message, searches }, 'could not read the listing to confirm operations: they are polled instead');
    return undefined;
  }
  if (parts.length === 1) return parts[0];
  const envs = new Map<string, Environment>();
  for (const part of parts)
    for (const env of part.environments) {
      const known = envs.get(env.id);
      envs.set(env.id, known ? { ...known, items: mergeItems(known, env) } : env);
    }
  const times = parts.map((p) => p.last_updated_at).filter((t) => t !== undefined);
  const { last_updated_at: _, ...first } = parts[0]!;
  return { ...first, environments: [...envs.values()], ...(times.length === parts.length ? { last_updated_at: times.sort()[0] } : {}) };
}
