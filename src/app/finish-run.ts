import type { OutputFile } from '../util/output-file.js';
import { forTerminal } from '../util/safe-text.js';
import { github } from './outputs/github.js';
import { htmlPage } from './outputs/html.js';
import { junit } from './outputs/junit.js';
import { markdown } from './outputs/markdown.js';
import { metrics } from './outputs/metrics.js';
import type { Abandoned, Finished, OutputStart, RunOutput, Started, Undelivered } from './outputs/output.js';
import { ping } from './outputs/ping.js';
import { privateFiles } from './outputs/private-files.js';
import { reportFile } from './outputs/report-file.js';
import { terminalSummary } from './outputs/terminal-summary.js';
import { webhooks } from './outputs/webhooks.js';
import type { Io } from './io.js';

export type { Abandoned, Finished, OutputFlags, OutputStart, RunOutput, Started, Undelivered } from './outputs/output.js';

/**
 * What a report leaves behind, in this order: the report first (what a resume reads, so it lands
 * even if a later output fails), then the private files, the summary, the files and lines for CI, and the run's page.
 * `status` ends with these: it brings a run's report up to date, and is no run of its own to tell of.
 */
export const REPORT_OUTPUTS: readonly RunOutput[] = [reportFile, privateFiles, terminalSummary, junit, markdown, github, htmlPage];

/** What every run (run, resume) leaves behind: the report's outputs, then what tells someone: metrics, the ping, the webhooks. */
export const RUN_OUTPUTS: readonly RunOutput[] = [...REPORT_OUTPUTS, metrics, ping, webhooks];

/** Every file the outputs will write, for the check when the command starts (see util/output-file.ts). */
export async function outputFiles(start: OutputStart, outputs: readonly RunOutput[] = RUN_OUTPUTS): Promise<OutputFile[]> {
  const files: OutputFile[] = [];
  for (const output of outputs) files.push(...(await output.files(start)));
  return files;
}

/**
 * The one way a run starts to be told of (run, resume), before the fleet is read: the outputs that
 * tell someone are told (a ping's `/start`). Then `work` runs; if an error ends it before its
 * report (the token refused, the lock held, the window closed), they are told its exit code.
 */
export async function announceRun<T>(
  start: Omit<Started, 'undelivered'>,
  work: (started: Started) => Promise<T>,
  outputs: readonly RunOutput[] = RUN_OUTPUTS,
): Promise<T> {
  const started: Started = { ...start, undelivered: [] };
  for (const output of outputs) if (output.start) started.undelivered.push(...warn(await guarded(output, 'start', () => output.start!(started)), started.io));
  try {
    return await work(started);
  } catch (error) {
    if (!started.told) await abandonRun({ started, exitCode: exitCodeOfError(error), error: (error as Error).message ?? String(error) }, outputs);
    throw error;
  }
}

async function abandonRun(abandoned: Abandoned, outputs: readonly RunOutput[]): Promise<void> {
  abandoned.started.told = true;
  for (const output of outputs) if (output.abandon) warn(await guarded(output, 'end', () => output.abandon!(abandoned)), abandoned.started.io);
}

/** The exit code `main` gives the error (report-error.ts): its own, 1 for one it does not know. */
function exitCodeOfError(error: unknown): number {
  const code = (error as { exitCode?: unknown; code?: unknown } | undefined)?.exitCode ?? (error as { code?: unknown } | undefined)?.code;
  return typeof code === 'number' ? code : 1;
}

/**
 * An output's work, whose failure (a file it cannot write, a state folder gone) becomes what it did
 * not deliver: the outputs after it still go, and the run keeps its exit code.
 */
async function guarded(output: RunOutput, at: Undelivered['at'], work: () => void | Undelivered[] | Promise<void | Undelivered[]>): Promise<Undelivered[]> {
  try {
    return (await work()) ?? [];
  } catch (error) {
    return [{ channel: output.name, at, tries: 1, error: (error as Error).message ?? String(error) }];
  }
}

/** One warning line per message not delivered, naming its channel (never its URL). */
function warn(undelivered: readonly Undelivered[], io: Io): Undelivered[] {
  for (const u of undelivered)
    io.stderr.write(
      `sitefleet: warning: ${u.channel}: the run's ${u.at} was not delivered (${forTerminal(u.error)}, ${u.tries} ${u.tries === 1 ? 'try' : 'tries'}); the run's outcome stands\n`,
    );
  return [...undelivered];
}

/**
 * The one way a run ends, whichever command ended it (run, dry run, resume, status): each output is
 * handed the finished run in turn. What could not be delivered (and the start ping's failure) goes
 * into the report, written again. Returns how long each took, in ms, for the run's log.
 */
export async function finishRun(finished: Finished, outputs: readonly RunOutput[] = RUN_OUTPUTS): Promise<Record<string, number>> {
  const took: Record<string, number> = {};
  if (finished.started) finished.started.told = true;
  const undelivered: Undelivered[] = [...(finished.started?.undelivered ?? [])];
  for (const output of outputs) {
    const start = performance.now();
    // The report itself must land or the command fails; any other output that fails is a warning, never the run's outcome.
    const failed = output === reportFile ? await output.write(finished) : await guarded(output, 'end', () => output.write(finished));
    if (failed) undelivered.push(...warn(failed, finished.io));
    took[output.name] = performance.now() - start;
  }
  if (undelivered.length > 0 && outputs.includes(reportFile)) {
    finished.report.value.undelivered = undelivered;
    await reportFile.write(finished);
  }
  return took;
}
