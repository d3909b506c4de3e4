import type { InstalledItem, SimEnvironment } from './fleet.js';

interface Before {
  /** When the write landed, on the simulator's clock. */
  at: number;
  /** The environment's items just before it. */
  items: Map<string, InstalledItem>;
}

/**
 * A company listing that lags behind writes: the vendor's staff say plugin data "can be cached for up
 * to 12 hours" (real-service-notes.md). The listing shows each environment's items as they were
 * `lagMs` ago on the simulator's clock (the one operations settle by, so a test moves it instead of
 * waiting): before each write the items are kept with the write's time, and dropped once the lag
 * has passed, so the store holds only the writes of the last `lagMs`. The environment's own listing
 * never lags.
 */
export class ListingLag {
  readonly #before = new Map<string, Before[]>();

  constructor(
    private readonly lagMs: number,
    private readonly now: () => number,
  ) {}

  /** Call before changing an environment's items: keeps what the listing shows until the lag passes. */
  beforeWrite(env: SimEnvironment, items: Map<string, InstalledItem>): void {
    if (this.lagMs <= 0) return;
    const kept = this.#fresh(env.id);
    kept.push({ at: this.now(), items: new Map([...items].map(([name, item]) => [name, { ...item }])) });
    this.#before.set(env.id, kept);
  }

  /** The items as they were `lagMs` ago: those before the first write since then, or the current ones. */
  seen(env: SimEnvironment, current: Map<string, InstalledItem>): Map<string, InstalledItem> {
    if (this.lagMs <= 0) return current;
    const kept = this.#fresh(env.id);
    if (kept.length === 0) this.#before.delete(env.id);
    return kept[0]?.items ?? current;
  }

  /** How many environments hold an older state now (a bounded store: tests check it empties). */
  get held(): number {
    for (const id of [...this.#before.keys()]) if (this.#fresh(id).length === 0) this.#before.delete(id);
    return this.#before.size;
  }

  /** The writes of the last `lagMs`, oldest first; older ones no longer hide anything. */
  #fresh(envId: string): Before[] {
    const since = this.now() - this.lagMs;
    const kept = (this.#before.get(envId) ?? []).filter((b) => b.at > since);
    if (kept.length > 0) this.#before.set(envId, kept);
    return kept;
  }
}
