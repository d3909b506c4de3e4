import type { Plan } from '../../plan/plan.js';
import type { Playbook } from '../../playbook/types.js';
import type { Report } from '../../report/report.js';
import type { StepResult } from '../../run/types.js';
import type { OutputFile } from '../../util/output-file.js';
import type { Io } from '../io.js';
import type { View } from '../view.js';

/** The output flags every command that ends a run takes (run, resume, status), declared by the outputs themselves. */
export interface OutputFlags {
  /** `--junit FILE` */
  junit?: string;
  /** `--summary-md FILE` */
  summaryMd?: string;
  /** `--ping URL`: a URL, or a `${VAR}` reference read from the environment. */
  ping?: string;
  /** `--metrics-file FILE` */
  metricsFile?: string;
  /** `--html FILE` */
  html?: string;
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

/**
 * A run starts (run, resume): what the outputs that tell someone (pings, webhooks, metrics) know
 * before the fleet is read. Handed back to them when it ends, with what could not be delivered.
 */
export interface Started extends OutputStart {
  io: Io;
  /** The playbook's name: what a run is known by to a monitor (a resume that loads no playbook has its journal's). */
  name: string;
  startedAt: Date;
  /** Where this machine keeps what runs leave for the next one (`--state-dir`): the previous exit code, for `on: change`. */
  stateDir: string;
  /** Deliveries that failed so far (the start ping); the report carries them. */
  undelivered: Undelivered[];
  /** Set once the run's end was told (finishRun, or abandonRun): it is told once. */
  told?: boolean;
}

/** A message that did not reach its channel: a warning line and the report's `undelivered`. Never its URL. */
export interface Undelivered {
  /** `ping`, `webhook 1`, `metrics`: which channel, as the playbook orders them. */
  channel: string;
  /** `start` or `end` of the run. */
  at: 'start' | 'end';
  tries: number;
  error: string;
}

/** A run that had started ended without a report: an error ended the command (the token refused, the lock held). */
export interface Abandoned {
  started: Started;
  exitCode: number;
  /** The error's message, as the command printed it. */
  error: string;
}

/** A run as it ended: its final report and what each output needs beside it. */
export interface Finished extends OutputStart {
  report: OutputStart['report'] & { value: Report };
  io: Io;
  /** `--quiet`: nothing on stdout but what a machine reads (annotations). */
  quiet: boolean;
  /** How the summary is drawn for a person (the command line's). */
  view: View;
  /** The run's own results, with what its report leaves out (login links for private files); a run or resume alone has them. */
  results?: ReadonlyMap<string, StepResult>;
  plan?: Plan;
  /** Lines for the terminal before the summary, and after it (what to do next, the 429 count). */
  before?: readonly string[];
  after?: readonly string[];
  /** The run's start, for the outputs that tell someone; absent for what is no run of its own (a dry run, status). */
  started?: Started;
  /** How often the service answered 429 during this command (a run or resume alone counts them). */
  rateLimited?: number;
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
  /** What it failed to deliver, if it delivers anything (a ping, a webhook); the report carries it. */
  write(finished: Finished): void | Undelivered[] | Promise<void | Undelivered[]>;
  /** A run starts, before the fleet is read (a ping's `/start`). */
  start?(started: Started): Promise<Undelivered[]>;
  /** A run that started ended without a report (its exit code still tells a monitor). */
  abandon?(abandoned: Abandoned): Promise<Undelivered[]>;
}
