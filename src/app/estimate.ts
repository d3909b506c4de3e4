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
    availableMs: available?.ms,
  });
  const per = (n: number) => `${Math.round(n * 100) / 100}/s`;
  const lines = [
    `estimate: about ${formatDuration(estimate.ms / 1000)} from the first write to the last answer, at ${per(pace.perSecond)}${pace.createPerSecond ? ` (creating calls ${per(pace.createPerSecond)})` : ''}:`,
  ];
  for (const t of estimate.tasks) {
    const ops =
      t.operationMs === undefined
        ? 'not waited for'
        : `${t.polls} polls, operations ~${formatDuration(t.operationMs / 1000)} each (${
            t.learned ? `learned from ${history!.samples.get(t.action)} operations` : `assumed${history ? ': none in --history' : ', no --history REPORT'}`
          })`;
    lines.push(`  ${terminalName(t.name)}: ${formatDuration(t.ms / 1000)}, ${t.writes} writes, ${ops}`);
  }
  if (available)
    lines.push(
      estimate.left === 0
        ? `fits ${available.name} (${formatDuration(available.ms / 1000)})`
        : `does not fit ${available.name} (${formatDuration(available.ms / 1000)}): about ${estimate.left} of ${plan.steps.length} steps would be left for the next window`,
    );
  return lines;
}
