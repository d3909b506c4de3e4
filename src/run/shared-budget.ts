import type { SharedWindow, SlotOutcome } from '../coord/types.js';
import { PRIORITY, type Priority, type RateBudget } from './rate-budget.js';

/** What the Caller and the session need of a rate budget: RateBudget alone, or with a shared window. */
export interface Budget {
  readonly limit: number;
  readonly rateLimitedCount: number;
  acquire(signal?: AbortSignal, priority?: Priority): Promise<void>;
  release(outcome?: SlotOutcome): void;
  pausedForMs(): number;
  describe(): string;
  dispose(): void;
}

/**
 * This process's RateBudget in front of the company's shared window. The local budget orders the
 * process's calls (writes before polls), paces them and learns from the 429s it sees; the shared
 * window then keeps every process together under the limit, and shares what a 429 taught (a lower
 * limit, a pause). A call needs both slots, and gives both back.
 */
export class SharedBudget implements Budget {
  constructor(
    readonly local: RateBudget,
    readonly shared: SharedWindow,
  ) {}

  get limit(): number {
    return this.local.limit;
  }

  get rateLimitedCount(): number {
    return this.local.rateLimitedCount;
  }

  async acquire(signal?: AbortSignal, priority: Priority = PRIORITY.write): Promise<void> {
    await this.local.acquire(signal, priority);
    try {
      await this.shared.take(signal);
    } catch (error) {
      this.local.release({ notSent: true });
      throw error;
    }
  }

  release(outcome: SlotOutcome = {}): void {
    this.local.release(outcome);
    this.shared.give(outcome);
  }

  pausedForMs(): number {
    return Math.max(this.local.pausedForMs(), this.shared.pausedForMs());
  }

  describe(): string {
    return `${this.local.describe()} (shared)`;
  }

  dispose(): void {
    this.local.dispose();
  }
}
