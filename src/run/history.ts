import { readFileSync } from 'node:fs';
import type { JournalRecord } from './journal.js';

export interface Learned {
  /** Median time from an operation's acceptance to the answer that ended it, per action (ms). */
  operationMs: Map<string, number>;
  /** Operations each median was taken over. */
  samples: Map<string, number>;
}

/**
 * What an earlier run's journal says of how long its operations took: from the answer that accepted
 * each one to the record that ended it (a poll, or the listing), per action. That is the time a run
 * waits for an operation, lag of its polls included, which is what an estimate needs.
 */
export function learnFromJournal(path: string): Learned {
  const records = readFileSync(path, 'utf8')
    .split('\n')
    .filter((line) => line.trim() !== '')
    .flatMap((line) => {
      try {
        return [JSON.parse(line) as JournalRecord];
      } catch {
        return []; // a torn last line
      }
    });
  const start = records[0];
  if (start?.t !== 'start') throw new Error(`${path} is not a sitefleet journal`);
  const actionOf = new Map(start.plan.steps.map((s) => [s.id, s.action]));
  const accepted = new Map<string, number>();
  const durations = new Map<string, number[]>();
  for (const r of records) {
    if (r.t !== 'result' && r.t !== 'update') continue;
    const status = r.result.status;
    if (status === 'accepted' && r.result.operation_id) accepted.set(r.step, r.at);
    else if ((status === 'succeeded' || status === 'failed') && accepted.has(r.step)) {
      const action = actionOf.get(r.step);
      if (action) durations.set(action, [...(durations.get(action) ?? []), r.at - accepted.get(r.step)!]);
      accepted.delete(r.step);
    }
  }
  const learned: Learned = { operationMs: new Map(), samples: new Map() };
  for (const [action, list] of durations) {
    const sorted = list.sort((a, b) => a - b);
    learned.operationMs.set(action, sorted[Math.floor(sorted.length / 2)]!);
    learned.samples.set(action, sorted.length);
  }
  return learned;
}
