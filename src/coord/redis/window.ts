import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import type { SharedWindow, SlotOutcome, WindowLane } from '../types.js';
import { companyKey } from './lock.js';
import { RedisLink, Script } from './link.js';
import { WINDOW_GIVE, WINDOW_TAKE } from './scripts.js';

const TAKE = new Script(WINDOW_TAKE);
const GIVE = new Script(WINDOW_GIVE);

/**
 * Longest a call can hold a slot without an answer: the HTTP client's headers and body timeouts (60 s
 * each) and some. A process that dies mid-call leaves its slots held this long, then they free.
 */
const IN_FLIGHT_MS = 130_000;
/** How often to look again while the slot that must free belongs to a call still in flight. */
const IN_FLIGHT_RECHECK_MS = 20;
/** Our window is a little longer than the server's, as in the in-process budget (clock rounding). */
const MARGIN_MS = 2;
const RAISE_AFTER_PERIODS = 5;

/**
 * The company's rate window in Redis (see WINDOW_TAKE): every process of every machine takes its
 * slots from it, so together they never exceed the limit in any window. This process's own RateBudget
 * still orders its calls (writes before polls) and paces them; the shared window is asked after it,
 * one call at a time, so that order holds.
 */
export class RedisWindow implements SharedWindow {
  readonly #keys: string[];
  readonly #periodMs: number;
  readonly #prefix = randomUUID().slice(0, 8);
  #next = 0;
  /** This process's slots now in flight. */
  readonly #held: string[] = [];
  #tail: Promise<unknown> = Promise.resolve();
  #pausedUntil = 0;

  constructor(
    private readonly link: RedisLink,
    company: string,
    private readonly limit: number,
    periodMs: number,
    lane: WindowLane = 'general',
  ) {
    // The general window keeps the keys it always had; the creating calls' window has its own.
    const names = lane === 'general' ? ['window', 'limits'] : ['create-window', 'create-limits'];
    this.#keys = names.map((name) => companyKey(company, name));
    this.#periodMs = periodMs + MARGIN_MS;
  }

  take(signal?: AbortSignal): Promise<void> {
    const turn = this.#tail.then(() => this.#takeOne(signal));
    this.#tail = turn.catch(() => undefined);
    return turn;
  }

  async #takeOne(signal: AbortSignal | undefined): Promise<void> {
    const id = `${this.#prefix}:${this.#next++}`;
    for (;;) {
      if (signal?.aborted) throw signal.reason as Error;
      const args = [id, this.limit, this.#periodMs, IN_FLIGHT_MS, RAISE_AFTER_PERIODS];
      const [taken, waitMs, inFlight, paused] = (await this.link.run(TAKE, this.#keys, args)) as number[];
      this.#pausedUntil = paused === 1 ? Date.now() + waitMs! : 0;
      if (taken === 1) {
        this.#held.push(id);
        return;
      }
      const wait = inFlight === 1 ? Math.min(waitMs!, IN_FLIGHT_RECHECK_MS) : waitMs!;
      await Promise.race([sleep(wait, undefined, { signal }), sleep(wait + 1, undefined, { signal: this.link.lost })]).catch(() => undefined);
    }
  }

  give(outcome: SlotOutcome): void {
    const id = this.#held.pop();
    if (id === undefined) return;
    const flags = [outcome.rateLimited ? 1 : 0, outcome.retryAfterMs ?? 0, outcome.notSent ? 1 : 0, this.limit];
    // The link stops the run if this fails; the answer itself is already in the journal.
    void this.link.run(GIVE, this.#keys, [id, this.#periodMs, ...flags]).catch(() => undefined);
  }

  pausedForMs(): number {
    return Math.max(0, this.#pausedUntil - Date.now());
  }
}
