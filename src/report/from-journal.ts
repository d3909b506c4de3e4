import { readJournal, type JournalState } from '../run/journal.js';
import type { StepResult } from '../run/types.js';
import { journalBreaks } from '../run/write-ends.js';
import { buildReport, type Report } from './report.js';

/**
 * A run's report as its journal tells it: the plan, run id, start and coordination of its sealed
 * start record, and the results the journal holds (or `results`, where the caller has already
 * settled which of them stand). The one way run, resume and restore make the report they end with,
 * so that it says what a resume would see, the versions found to break a site with when they did.
 */
export function reportFromJournal(journal: string | JournalState, results?: Map<string, StepResult>): Report {
  const state = typeof journal === 'string' ? readJournal(journal) : journal;
  const settled = results ?? state.results;
  const startedAt = new Date(state.start.started_at);
  return buildReport({
    plan: state.start.plan,
    mode: 'run',
    startedAt,
    finishedAt: new Date(),
    results: settled,
    breaks: journalBreaks(state.start.plan, settled, state.putBack, startedAt.getTime()),
    stopped: state.stopped,
    runId: state.start.run_id,
    coordination: state.start.coordination ?? null,
  });
}
