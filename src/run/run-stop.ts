import { setMaxListeners } from 'node:events';
import type { StopKind } from './types.js';

/**
 * Why and when a run stops starting new calls. Stopping cuts no call in flight: cutting one would
 * turn an answer the server already gave into an unknown. Everything that waits (a slot, a backoff,
 * a poll's moment) listens on `signal`.
 */
export class RunStop {
  readonly #controller = new AbortController();
  readonly signal: AbortSignal;
  reason?: { reason: string; kind: StopKind };

  constructor(
    outer: AbortSignal | undefined,
    private readonly onStop: (reason: string, kind: StopKind) => void,
  ) {
    this.signal = outer ? AbortSignal.any([outer, this.#controller.signal]) : this.#controller.signal;
    // Every waiting step listens on this signal: thousands of listeners are expected, not a leak.
    setMaxListeners(0, this.#controller.signal, this.signal);
    if (outer?.aborted) this.stop('interrupted', 'interrupted');
    outer?.addEventListener('abort', () => this.stop('interrupted', 'interrupted'), { once: true });
  }

  get stopped(): boolean {
    return this.reason !== undefined;
  }

  stop(reason: string, kind: StopKind): void {
    if (this.reason) return;
    this.reason = { reason, kind };
    this.#controller.abort();
    this.onStop(reason, kind);
  }
}
