import type { Command } from 'commander';
import type { OutputFile } from '../util/output-file.js';
import { github } from './outputs/github.js';
import { junit } from './outputs/junit.js';
import { markdown } from './outputs/markdown.js';
import type { Finished, OutputStart, RunOutput } from './outputs/output.js';
import { privateFiles } from './outputs/private-files.js';
import { reportFile } from './outputs/report-file.js';
import { terminalSummary } from './outputs/terminal-summary.js';

export type { Finished, OutputFlags, OutputStart, RunOutput } from './outputs/output.js';

/**
 * What every run leaves behind, in this order: the report first (what a resume reads, so it lands
 * even if a later output fails), then the private files, the summary, and the files and lines for CI.
 */
export const RUN_OUTPUTS: readonly RunOutput[] = [reportFile, privateFiles, terminalSummary, junit, markdown, github];

/** The output flags (`--junit`, `--summary-md`, …) of a command that ends a run, as its outputs declare them. */
export function addOutputOptions(command: Command, outputs: readonly RunOutput[] = RUN_OUTPUTS): Command {
  for (const { option } of outputs) if (option) command.option(option.flags, option.description);
  return command;
}

/** Every file the outputs will write, for the check when the command starts (see util/output-file.ts). */
export async function outputFiles(start: OutputStart, outputs: readonly RunOutput[] = RUN_OUTPUTS): Promise<OutputFile[]> {
  const files: OutputFile[] = [];
  for (const output of outputs) files.push(...(await output.files(start)));
  return files;
}

/**
 * The one way a run ends, whichever command ended it (run, dry run, resume, status): each output is
 * handed the finished run in turn. Returns how long each took, in ms, for the run's log.
 */
export async function finishRun(finished: Finished, outputs: readonly RunOutput[] = RUN_OUTPUTS): Promise<Record<string, number>> {
  const took: Record<string, number> = {};
  for (const output of outputs) {
    const start = performance.now();
    await output.write(finished);
    took[output.name] = performance.now() - start;
  }
  return took;
}
