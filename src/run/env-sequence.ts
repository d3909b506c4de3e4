/**
 * Per-environment ordering. The service fails an operation sent to an environment that is busy with
 * another ("blocked by another process"), so a step waits for the previous operation on its
 * environment to end before it is sent. Waiting is a promise, not a send slot.
 *
 * Each environment has a chain of turns. A turn ends when its step's call was answered and, if it
 * started an operation, once that operation is known to have ended. An operation of a task that does
 * not wait is watched only when a later step needs its environment (`lazy`), so runs that never come
 * back to an environment spend no polls on it.
 */
export interface Turn {
  /** Resolves when the environment is free for the next step; asking is what starts watching a lazy operation. */
  whenFree(): Promise<void>;
  /** Called when someone starts waiting on this turn (the watcher then polls it before writes). */
  expedite(): void;
}

export class EnvironmentSequence {
  readonly #last = new Map<string, Turn>();

  /**
   * Waits for the environment's previous turn, if any, and takes the next one. `release` must be
   * called with what frees the environment: nothing (free at once), or a turn for its operation.
   */
  async enter(env: string | undefined): Promise<(next?: Turn) => void> {
    if (!env) return () => undefined;
    const previous = this.#last.get(env);
    let settle!: (turn?: Turn) => void;
    const handed = new Promise<Turn | undefined>((resolve) => (settle = resolve));
    const mine: Turn = {
      whenFree: () => handed.then((turn) => turn?.whenFree()),
      expedite: () => void handed.then((turn) => turn?.expedite()),
    };
    this.#last.set(env, mine);
    if (previous) {
      previous.expedite();
      await previous.whenFree();
    }
    return settle;
  }
}
