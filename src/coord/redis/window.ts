import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import type { SharedWindow, SlotOutcome, WindowLane } from '../types.js';
import { companyKey } from './lock.js';
import { RedisLink, Script } from './link.js';
import { LIMITS_SET, WINDOW_GIVE, WINDOW_TAKE } from './scripts.js';
import { afterAnswer, afterRefusal, initialLimits, LEARNING, type LearnedRule, type Limits } from '../../util/learned-limit.js';

const TAKE = new Script(WINDOW_TAKE);
const GIVE = new Script(WINDOW_GIVE);
const SET = new Script(LIMITS_SET);

/**
 * Longest a call can hold a slot without an answer: the HTTP client's headers and body timeouts (60 s
 * each) and some. A process that dies mid-call leaves its slots held this long, then they free.
 */
const IN_FLIGHT_MS = 130_000;
/** How often to look again while the slot that must free belongs to a call still in flight. */
const IN_FLIGHT_RECHECK_MS = 20;
/** Tries of a compare-and-set of the learned rules while other processes change them too. */
const LEARN_TRIES = 5;

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
  /** The answers given back and what they taught, in order (see `settled`). */
  #learning: Promise<unknown> = Promise.resolve();
  #pausedUntil = 0;

  constructor(
    private readonly link: RedisLink,
    company: string,
    private readonly limit: number,
    periodMs: number,
    lane: WindowLane = 'general',
  ) {
    // The general window keeps the keys it always had; each other rule's window has its own.
    const names = lane === 'general' ? ['window', 'limits'] : [`${lane}-window`, `${lane}-limits`];
    this.#keys = names.map((name) => companyKey(company, name));
    this.#periodMs = periodMs + LEARNING.marginMs;
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
      const args = [id, this.limit, this.#periodMs, IN_FLIGHT_MS];
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
    const flags = [outcome.rateLimited ? 1 : 0, outcome.retryAfterMs ?? 0, outcome.notSent ? 1 : 0];
    // The link stops the run if this fails; the answer itself is already in the journal.
    const given = this.link.run(GIVE, this.#keys, [id, this.#periodMs, ...flags]);
    this.#learning = Promise.all([this.#learning, given])
      .then(([, reply]) => this.#learn(reply as (string | number)[], outcome))
      .catch(() => undefined);
  }

  /** Resolves once every answer given back so far is in Redis with what it taught (tests, shutdown). */
  settled(): Promise<void> {
    return this.#learning.then(() => undefined);
  }

  /**
   * Decides what an answer teaches, by the one rule (util/learned-limit.ts), from the counts and the
   * rules Redis gave back, and stores it with compare-and-set: if another process changed the rules
   * first, decide again from theirs.
   */
  async #learn(reply: (string | number)[], outcome: SlotOutcome): Promise<void> {
    if (reply.length === 0) return; // nothing learned yet and nothing to learn
    const [now, inWait, inPeriod] = reply.slice(0, 3).map(Number) as [number, number, number];
    let found = reply.slice(3);
    for (let tries = 0; tries < LEARN_TRIES; tries++) {
      const [state, version, ...blocked] = found;
      const limits = this.#decode(String(state), blocked, now);
      const counted = (windowMs: number) => (windowMs === this.#periodMs ? inPeriod : inWait);
      const decided = outcome.rateLimited ? afterRefusal(limits, now, outcome.retryAfterMs, counted) : { limits: afterAnswer(limits, now) };
      if (!decided.limits) return;
      const pauseUntil = 'pauseUntil' in decided ? (decided.pauseUntil ?? 0) : 0;
      const stored = (await this.link.run(SET, [this.#keys[1]!], [Number(version), encode(decided.limits), pauseUntil])) as (string | number)[];
      if (Number(stored[0]) === 1) {
        if (pauseUntil > 0) this.#pausedUntil = Math.max(this.#pausedUntil, Date.now() + pauseUntil - now);
        return;
      }
      found = stored.slice(1);
    }
  }

  #decode(state: string, blocked: (string | number)[], now: number): Limits {
    const at = new Map<number, number>();
    for (let i = 0; i + 1 < blocked.length; i += 2) at.set(Number(blocked[i]), Number(blocked[i + 1]));
    if (state === '') {
      const limits = initialLimits(this.limit, this.#periodMs, now);
      limits.rules[0]!.blockedAt = at.get(this.#periodMs) ?? -Infinity;
      return limits;
    }
    const raw = JSON.parse(state) as { rules: Omit<LearnedRule, 'blockedAt'>[]; last429: number | null };
    return { rules: raw.rules.map((r) => ({ ...r, blockedAt: at.get(r.windowMs) ?? -Infinity })), last429: raw.last429 ?? -Infinity };
  }

  pausedForMs(): number {
    return Math.max(0, this.#pausedUntil - Date.now());
  }
}

/** The rules as Redis keeps them: JSON has no -Infinity, and when a rule held calls back is Redis's own field. */
function encode(limits: Limits): string {
  return JSON.stringify({
    rules: limits.rules.map(({ blockedAt: _blockedAt, ...rule }) => rule),
    last429: Number.isFinite(limits.last429) ? limits.last429 : null,
  });
}
