import { setMaxListeners } from 'node:events';
import type { Clock } from '../util/clock.js';
import type { StopKind } from './types.js';

/**
 * The stops that end started lives at once, not only new writes: a rejected token (nothing more can
 * be sent or read) and lost coordination (the shared budget and register can no longer be trusted).
 * Every other stop (a crossed failure budget, the window, the first Ctrl-C, a service answering 429
 * too long) keeps new writes from starting and lets every write already sent finish its life.
 */
const HALTS: ReadonlySet<StopKind> = new Set(['auth', 'coordination']);

/** `settings.finish_within`'s default: a restore and a few isolation rounds on the real service fit in it. */
export const DEFAULT_FINISH_WITHIN_MS = 30 * 60_000;

/**
 * Why and when a run stops. Two levels, each a signal:
 * - `signal` (stopped): no new write starts. What waits before a send listens on it.
 * - `halt` (halted): started lives stop too, each journaled where it stands, for `resume`. What
 *   follows, clears, looks at, restores or isolates a started write listens on it. It comes with a
 *   halting stop (HALTS), from its owner (`outerHalt`), or `finishWithinMs` after the first stop.
 * Neither cuts a call in flight: cutting one would turn an answer the server already gave into an unknown.
 */
export class RunStop {
  readonly #controller = new AbortController();
  readonly #halt = new AbortController();
  readonly signal: AbortSignal;
  readonly halt: AbortSignal;
  reason?: { reason: string; kind: StopKind };
  #timer?: unknown;

  constructor(
    outer: AbortSignal | undefined,
    private readonly onStop: (reason: string, kind: StopKind) => void,
    private readonly bound: { finishWithinMs: number; clock: Clock; outerHalt?: AbortSignal; onHalt?: (why: string) => void } = {
      finishWithinMs: DEFAULT_FINISH_WITHIN_MS,
      clock: { now: () => 0, setTimeout: () => undefined, clearTimeout: () => undefined },
    },
  ) {
    this.halt = bound.outerHalt ? AbortSignal.any([bound.outerHalt, this.#halt.signal]) : this.#halt.signal;
    // A halt is a stop too: nothing new starts once started lives may not finish.
    this.signal = AbortSignal.any([...(outer ? [outer] : []), this.#controller.signal, this.halt]);
    // Every waiting step listens on these signals: thousands of listeners are expected, not a leak.
    setMaxListeners(0, this.#controller.signal, this.signal, this.#halt.signal, this.halt);
    if (outer?.aborted) this.stop('interrupted', 'interrupted');
    outer?.addEventListener('abort', () => this.stop('interrupted', 'interrupted'), { once: true });
    const outerHalt = bound.outerHalt;
    if (outerHalt?.aborted) this.stop('halted', 'interrupted');
    outerHalt?.addEventListener('abort', () => this.stop('halted', 'interrupted'), { once: true });
  }

  get stopped(): boolean {
    return this.reason !== undefined;
  }

  get halted(): boolean {
    return this.halt.aborted;
  }

  stop(reason: string, kind: StopKind): void {
    if (this.reason) {
      if (HALTS.has(kind)) this.haltNow(reason);
      return;
    }
    // The reason first: a halt's listeners (the owner's halt among them) find the run stopped for this one.
    this.reason = { reason, kind };
    this.#controller.abort();
    if (HALTS.has(kind)) this.haltNow(reason);
    else this.startFinishClock();
    this.onStop(reason, kind);
  }

  /** Started lives have `finishWithinMs` from now (a stop, or the window closing, which stops only new writes); once, never after dispose. */
  startFinishClock(): void {
    if (this.#timer !== undefined || this.halted) return;
    this.#timer = this.bound.clock.setTimeout(
      () => this.haltNow(`settings.finish_within (${this.bound.finishWithinMs} ms) ran out after the stop`),
      this.bound.finishWithinMs,
    );
  }

  /** Started lives stop where they stand (each journaled there, for resume). */
  haltNow(why: string): void {
    if (this.halted) return;
    this.bound.onHalt?.(why);
    this.#halt.abort(new Error(why));
  }

  /** The run ended: the finish_within timer goes with it, and none starts after. */
  dispose(): void {
    if (this.#timer !== undefined && this.#timer !== null) this.bound.clock.clearTimeout(this.#timer);
    this.#timer = null;
  }
}
