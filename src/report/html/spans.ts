import type { JournalRecord } from '../../run/journal.js';
import { openingAt } from '../../util/time-window.js';

/** When one sent step went out and ended, from its journal records (epoch ms). */
export interface Span {
  /** Its first attempt's intent: written just before the request left. */
  send: number;
  /** The first record that ended it (an answer that was not `accepted`, or its operation's end); else its last record. */
  end: number;
  /** No record ended it: its operation was not seen to finish (drawn to the run's end). */
  open: boolean;
  /** The last record that carried its restore (`restored`), when its site was put back. */
  restoredAt?: number;
}

/** What the journal says of a run's timing: each sent step's span, the run's first and last record, its window's end. */
export interface RunTimes {
  spans: Map<string, Span>;
  first: number;
  last: number;
  /** When `settings.window` closed on the opening the run started in; absent without a window. */
  windowEnd?: number;
}

/**
 * Reads the spans from the journal's records, in order: intents say when a step was sent, results
 * and updates when it ended and when a restore of its site was recorded. A step with no intent was
 * never sent and has no span.
 */
export function runTimes(records: readonly JournalRecord[]): RunTimes {
  const spans = new Map<string, Span>();
  let first = Infinity;
  let last = -Infinity;
  for (const r of records) {
    if (r.t === 'start') continue;
    first = Math.min(first, r.at);
    last = Math.max(last, r.at);
    if (r.t === 'intent') {
      if (!spans.has(r.step)) spans.set(r.step, { send: r.at, end: r.at, open: true });
      continue;
    }
    if (r.t !== 'result' && r.t !== 'update') continue;
    const span = spans.get(r.step);
    if (!span) continue; // an answer for a step with no intent is no journal sitefleet wrote; nothing to draw
    if (span.open) span.end = r.at;
    if (r.result.status !== 'accepted') span.open = false;
    if (r.result.restored) span.restoredAt = r.at;
  }
  const start = records[0]?.t === 'start' ? records[0] : undefined;
  const startedAt = start ? Date.parse(start.started_at) : first;
  const window = start?.plan.settings.window;
  return {
    spans,
    first: Math.min(first, startedAt),
    last: Number.isFinite(last) ? last : startedAt,
    ...(window && { windowEnd: openingAt(window, startedAt).end }),
  };
}
