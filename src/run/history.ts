import { readFileSync } from 'node:fs';
import type { JournalRecord } from './journal.js';

export interface Learned {
  /** Median time from an operation's acceptance to the answer that ended it, per action (ms). */
  operationMs: Map<string, number>;
  /** Operations each median was taken over. */
  samples: Map<string, number>;
  /** Median time from a guarded write's operation's end to its look after (its cache clear and page), per action (ms). */
  afterMs: Map<string, number>;
}

/**
 * What an earlier run's journal says of how long its operations took: from the answer that accepted
 * each one to the record that ended it (a poll, or the listing), per action, for the operations at
 * the end of their wave. That is the time a run waits for its last operation after its last write,
 * which is what an estimate needs. A backup_first task's restore points are operations of their own
 * action (backups.create), learned apart from its writes in the same wave. Guarded writes teach how
 * long their look after took: from the operation's end to the record that carries the look.
 */
export function learnFromJournal(path: string): Learned {
  const records = readJournal(path);
  const steps = new Map(records[0].plan.steps.map((s) => [s.id, s]));
  const accepted = new Map<string, number>();
  const ended = new Map<string, number>();
  // Per wave of a task and action, each operation's acceptance and how long it took.
  const waves = new Map<string, { action: string; at: number; ms: number }[]>();
  const after = new Map<string, number[]>();
  for (const r of records) {
    if (r.t !== 'result' && r.t !== 'update') continue;
    const status = r.result.status;
    const step = steps.get(r.step);
    if (!step) continue;
    if (r.result.health?.after !== undefined && ended.has(r.step)) {
      after.set(step.action, [...(after.get(step.action) ?? []), r.at - ended.get(r.step)!]);
      ended.delete(r.step);
    }
    if (status === 'accepted' && r.result.operation_id) accepted.set(r.step, r.at);
    else if ((status === 'succeeded' || status === 'failed') && accepted.has(r.step)) {
      const key = `${step.task_index}:${step.wave ?? 0}:${step.action}`;
      waves.set(key, [...(waves.get(key) ?? []), { action: step.action, at: accepted.get(r.step)!, ms: r.at - accepted.get(r.step)! }]);
      accepted.delete(r.step);
      if (status === 'succeeded' && step.health) ended.set(r.step, r.at);
    }
  }
  // Early in a wave, polls wait behind the writes still going out, and an operation is seen done
  // long after it ended: only the last tenth of each wave's operations says how long one takes.
  const durations = new Map<string, number[]>();
  for (const ops of waves.values()) {
    const last = ops.sort((a, b) => a.at - b.at).slice(-Math.ceil(ops.length / 10));
    for (const op of last) durations.set(op.action, [...(durations.get(op.action) ?? []), op.ms]);
  }
  const learned: Learned = { operationMs: new Map(), samples: new Map(), afterMs: new Map() };
  for (const [action, list] of durations) {
    learned.operationMs.set(action, median(list));
    learned.samples.set(action, list.length);
  }
  for (const [action, list] of after) learned.afterMs.set(action, median(list));
  return learned;
}

function median(list: number[]): number {
  const sorted = [...list].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)]!;
}

/** The journal's records (a torn last line left out), its start first. */
function readJournal(path: string): JournalRecord[] & { 0: Extract<JournalRecord, { t: 'start' }> } {
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
  if (records[0]?.t !== 'start') throw new Error(`${path} is not a sitefleet journal`);
  return records as JournalRecord[] & { 0: Extract<JournalRecord, { t: 'start' }> };
}
