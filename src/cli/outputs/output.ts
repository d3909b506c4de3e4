import type { Plan } from '../../plan/plan.js';
import type { Playbook } from '../../playbook/types.js';
import type { Report } from '../../report/report.js';
import type { StepResult } from '../../run/types.js';
import type { OutputFile } from '../../util/output-file.js';
import type { Io } from '../io.js';

/** The output flags every command that ends a run takes (run, resume, status), declared by the outputs themselves. */
export interface OutputFlags {
  /** `--junit FILE` */
  junit?: string;
  /** `--summary-md FILE` */
  summaryMd?: string;
}

/** What a command knows as it starts, before anything is sent: enough to name every file its outputs will write. */
export interface OutputStart {
  /** The report, and how the user named it (`--report`, or the `report` argument of resume and status). */
  report: { flag: string; path: string };
  flags: OutputFlags;
  env: Io['env'];
  /** A run's playbook (run, resume): the private files its tasks name. */
  playbook?: Playbook;
}

/** A run as it ended: its final report and what each output needs beside it. */
export interface Finished extends OutputStart {
  report: OutputStart['report'] & { value: Report };
  io: Io;
  /** `--quiet`: nothing on stdout but what a machine reads (annotations). */
  quiet: boolean;
  /** The run's own results, with what its report leaves out (login links for private files); a run or resume alone has them. */
  results?: ReadonlyMap<string, StepResult>;
  plan?: Plan;
  /** Lines for the terminal before the summary, and after it (what to do next, the 429 count). */
  before?: readonly string[];
  after?: readonly string[];
}

/**
 * One thing a run leaves behind when it ends: a file, lines on the terminal, a message elsewhere.
 * finishRun hands every one the same finished run; the next ones (notifications, metrics, pages)
 * are more of these. A module loads what it writes with only when it is used: the commands'
 * options are declared from these as the program starts, for `validate` and `--help` too.
 */
export interface RunOutput {
  readonly name: string;
  /** Its flag, declared once here for every command that ends a run. */
  readonly option?: { flags: string; description: string };
  /** The files it will write, checked (exit 2, nothing sent) when the command starts. */
  files(start: OutputStart): OutputFile[] | Promise<OutputFile[]>;
  write(finished: Finished): void | Promise<void>;
}
