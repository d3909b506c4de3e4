import type { Journal } from '../../run/journal.js';
import type { Subscriber } from './subscriber.js';

/** Writes the run's events to its journal: intent before each send, each answer as soon as it is in, a restore point's room once made. */
export function journalRecorder(journal: Journal, now: () => number = Date.now): Subscriber {
  return {
    onEvent(event) {
      switch (event.type) {
        case 'attempt':
          return journal.append({ t: 'intent', step: event.step.id, attempt: event.attempt, at: now() });
        case 'room':
          return journal.append({ t: 'room', step: event.step.id, slots: event.slots, at: now() });
        case 'stopped':
          return journal.append({ t: 'stopped', kind: event.kind, reason: event.reason, at: now() });
        case 'result':
        case 'update':
          return journal.append({ t: event.type, step: event.step.id, result: event.result, at: now() });
      }
    },
  };
}
