import type { InputProblem } from '../errors.js';
import type { Plan } from '../plan/plan.js';
import type { Report } from '../report/report.js';
import type { Subscriber } from './run-events/subscriber.js';

/** A count that moves as items end, drawn on a terminal's status line (or nowhere: cron, CI, --quiet). */
export interface Counter {
  step(failed: boolean): void;
  end(): void;
}

/** What a run's status line shows beside its own counts, asked at each redraw. */
export interface RunLineSources {
  /** The service's pause (a 429's Retry-After), shown while it lasts. */
  pausedForMs(): number;
  /** When the run next looks at an operation (a poll or a listing read), once the executor says. */
  nextLookMs(): number | undefined;
  /** The run's window has closed: nothing more will be sent. */
  closed(): boolean;
}

/**
 * How the app shows a person what they decide on and read, and asks them: the command line draws it
 * (src/cli/terminal-view.ts). The app layer formats no table, plan, summary or prompt of its own, so
 * that another front (a scheduler, a web page) can run the same code with its own view.
 */
export interface View {
  /** The plan as a person reviews it before anything is sent (every call with `verbose`). */
  plan(plan: Plan, verbose: boolean): string;
  /** A finished run's report as the closing summary, with the command that continues it. */
  summary(report: Report, reportPath: string): string;
  /** A playbook problem that does not stop the command, as one line. */
  warning(problem: InputProblem): string;
  /** Before writes: yes goes ahead, a person at a terminal is asked, anyone else refused (UsageError, exit 2). */
  confirmWrites(command: string, question: string, yes: boolean | undefined): Promise<void>;
  /** A count of `total` items (`label`: what ends, e.g. "operations ended"). */
  counter(total: number, label: string): Counter;
  /** A run's status line: its phase, counts and ETA over `steps` steps, the tasks in `waits` waiting for their operations. */
  runLine(steps: number, waits: ReadonlySet<number>, sources: RunLineSources): Subscriber;
}
