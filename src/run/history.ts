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
 * each one to the record that ended it (a poll, or the listing), per action, for the operations at
 * the end of their wave. That is the time a run waits for its last operation after its last write,
 * which is what an estimate needs.
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
  const steps = new Map(start.plan.steps.map((s) => [s.id, s]));
  const accepted = new Map<string, number>();
  // Per wave of a task, each operation's acceptance and how long it took.
  const waves = new Map<string, { action: string; at: number; ms: number }[]>();
  for (const r of records) {
    if (r.t !== 'result' && r.t !== 'update') continue;
    const status = r.result.status;
    const step = steps.get(r.step);
    if (!step) continue;
    if (status === 'accepted' && r.result.operation_id) accepted.set(r.step, r.at);
    else if ((status === 'succeeded' || status === 'failed') && accepted.has(r.step)) {
      const key = `${step.task_index}:${step.wave ?? 0}`;
      waves.set(key, [...(waves.get(key) ?? []), { action: step.action, at: accepted.get(r.step)!, ms: r.at - accepted.get(r.step)! }]);
      accepted.delete(r.step);
    }
  }
  // Early in a wave, polls wait behind the writes still going out, and an operation is seen done
  // long after it ended: only the last tenth of each wave's operations says how long one takes.
  const durations = new Map<string, number[]>();
  for (const ops of waves.values()) {
    const last = ops.sort((a, b) => a.at - b.at).slice(-Math.ceil(ops.length / 10));
    for (const op of last) durations.set(op.action, [...(durations.get(op.action) ?? []), op.ms]);
  }
  const learned: Learned = { operationMs: new Map(), samples: new Map() };
  for (const [action, list] of durations) {
    const sorted = list.sort((a, b) => a - b);
    learned.operationMs.set(action, sorted[Math.floor(sorted.length / 2)]!);
    learned.samples.set(action, sorted.length);
  }
  return learned;
}
