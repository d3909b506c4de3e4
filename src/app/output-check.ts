import { journalPathFor } from '../run/journal.js';
import { checkOutputs, type InputFile, type OutputFile } from '../util/output-file.js';
import type { GlobalOptions } from './runtime.js';

/**
 * Checks a command's outputs and `--log-file` when it starts, before anything is sent: against its
 * own inputs, the files any command may read (`--sites`, `--token-file`, `--allow-outside`) and each
 * other (see util/output-file.ts). Exit 2, one line, on the first that would clobber something.
 */
export function checkCommandOutputs(globals: GlobalOptions, outputs: readonly OutputFile[], inputs: readonly InputFile[]): void {
  checkOutputs(
    [...outputs, ...(globals.logFile ? [{ flag: '--log-file', path: globals.logFile, kind: 'log' } as const] : [])],
    [
      ...inputs,
      ...(globals.sites ? [{ what: 'the sites file (--sites)', path: globals.sites }] : []),
      ...(globals.tokenFile ? [{ what: 'the token file (--token-file)', path: globals.tokenFile }] : []),
      ...(globals.allowOutside ?? []).map((path) => ({ what: 'a file the playbook may read (--allow-outside)', path })),
    ],
  );
}

/** A run's journal, beside its report: no output of any command may be it. */
export function journalOf(reportPath: string, what = "the run's journal"): InputFile {
  return { what, path: journalPathFor(reportPath) };
}
