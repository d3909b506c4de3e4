import type { RunEvent } from '../../run/types.js';

/** Something fed the executor's events during a run (journal, report snapshots, progress, log). */
export interface Subscriber {
  /** Awaited: the executor sends nothing more for the step until it returns (the journal records intent first). */
  onEvent(event: RunEvent): void | Promise<void>;
  /** The run's calls ended: stop timers, draw the last line. */
  end?(): void;
}

/**
 * Feeds every event to each subscriber in order; the run waits for those that return a promise (the
 * journal). Synchronous ones cost no await: this runs two or three times for every call of a run.
 */
export function fanOut(subscribers: Subscriber[]): (event: RunEvent) => void | Promise<void> {
  return (event) => {
    let pending: Promise<void>[] | undefined;
    for (const s of subscribers) {
      const done = s.onEvent(event);
      if (done) (pending ??= []).push(done);
    }
    if (!pending) return;
    return pending.length === 1 ? pending[0] : Promise.all(pending).then(() => undefined);
  };
}
