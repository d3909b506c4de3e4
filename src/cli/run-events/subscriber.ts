import type { RunEvent } from '../../run/types.js';

/** Something fed the executor's events during a run (journal, report snapshots, progress, log). */
export interface Subscriber {
  /** Awaited: the executor sends nothing more for the step until it returns (the journal records intent first). */
  onEvent(event: RunEvent): void | Promise<void>;
  /** The run's calls ended: stop timers, draw the last line. */
  end?(): void;
}

/** Feeds every event to each subscriber in turn; the run waits for them all. */
export function fanOut(subscribers: Subscriber[]): (event: RunEvent) => Promise<void> {
  return async (event) => {
    for (const s of subscribers) await s.onEvent(event);
  };
}
