import { UsageError } from '../errors.js';
import { estimateRun } from '../plan/estimate.js';
import type { Plan } from '../plan/plan.js';
import { learnFromJournal, type Learned } from '../run/history.js';
import { journalPathFor } from '../run/journal.js';
import { describeWindow, openingAt } from '../util/time-window.js';
import type { Runtime } from './runtime.js';
import { formatDuration } from '../util/duration.js';
import { terminalName } from '../util/safe-text.js';

/** `--history REPORT`: operation durations from that run's journal (beside the report). */
export function readHistory(report: string): Learned {
  try {
    return learnFromJournal(journalPathFor(report));
  } catch (error) {
    throw new UsageError(
      `--history ${report}: cannot read its journal ${journalPathFor(report)} (${(error as NodeJS.ErrnoException).code ?? (error as Error).message})`,
    );
  }
}

/** A rate as people say it: per second, or per minute under one a second (5/min, not 0.08/s). */
function per(n: number): string {
  return n >= 1 ? `${Math.round(n * 100) / 100}/s` : `${Math.round(n * 60 * 100) / 100}/min`;
}

/**
 * The lines `plan` (and `run`) print about how long the run should take, and whether it fits the
 * time it has: the playbook's window (its whole length), or what is left before `--not-after`.
 */
export function estimateLines(plan: Plan, pace: Runtime['pace'], history: Learned | undefined, until?: { ms: number; name: string }): string[] {
  if (plan.steps.length === 0) return [];
  const window = plan.settings.window;
  const opening = window ? openingAt(window, Date.now()) : undefined;
  const available = until ?? (window && opening ? { ms: opening.end - opening.start, name: `settings.window ${describeWindow(window)}` } : undefined);
  const estimate = estimateRun(plan, {
    perSecond: pace.perSecond,
    createPerSecond: pace.createPerSecond,
    learned: history?.operationMs ?? new Map(),
    learnedAfter: history?.afterMs,
    availableMs: available?.ms,
  });
  const creating = estimate.tasks.some((t) => t.createMs > 0);
  const lane = estimate.createAssumed ? "the service's documented limit; create_rate_limit sets yours" : 'create_rate_limit';
  const lines = [
    `estimate: about ${formatDuration(estimate.ms / 1000)} from the first write to the last answer, at ${per(pace.perSecond)}${creating ? `, creating calls at ${per(estimate.createPerSecond)} (${lane})` : ''}:`,
  ];
  const source = (learned: boolean | undefined, what: string) =>
    learned ? `learned from ${what}` : `assumed${history ? ': none in --history' : ', no --history REPORT'}`;
  for (const t of estimate.tasks) {
    const ops =
      t.operationMs === undefined
        ? 'not waited for'
        : `${t.polls} polls, operations ~${formatDuration(t.operationMs / 1000)} each (${source(t.learned, `${history?.samples.get(t.action)} operations`)})`;
    const parts = [
      `${t.writes} writes`,
      ...(t.restorePoints > 0
        ? [`${t.restorePoints} restore points (backups ~${formatDuration(t.backupMs! / 1000)} each, ${source(t.backupLearned, 'last run')})`]
        : []),
      ...(t.createMs > 0 ? [`creating-call lane ${formatDuration(t.createMs / 1000)}`] : []),
      ...(t.clears > 0 ? [`${t.clears} cache clears`] : []),
      ...(t.readBacks > 0 ? [`${t.readBacks} read-backs`] : []),
      ...(t.databaseSteps > 0 ? [`${t.databaseSteps} database steps`] : []),
      ops,
      ...(t.afterMs !== undefined ? [`clear and look ~${formatDuration(t.afterMs / 1000)} each (${source(t.afterLearned, 'last run')})`] : []),
    ];
    lines.push(`  ${terminalName(t.name)}: ${formatDuration(t.ms / 1000)}, ${parts.join(', ')}`);
  }
  if (available)
    lines.push(
      estimate.left === 0
        ? `fits ${available.name} (${formatDuration(available.ms / 1000)})`
        : `does not fit ${available.name} (${formatDuration(available.ms / 1000)}): about ${estimate.left} of ${plan.steps.length} steps would be left for the next window`,
    );
  return lines;
}
