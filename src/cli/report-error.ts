import { CommanderError } from 'commander';
import { EXIT, formatProblem, InvalidInputError, SitefleetError } from '../errors.js';
import { forTerminal } from '../util/safe-text.js';
import type { Output } from '../app/io.js';

/** One clear line (or one per problem) and the exit code the error carries. */
export function reportError(error: unknown, stderr: Output): number {
  if (error instanceof CommanderError) {
    return error.code === 'commander.helpDisplayed' || error.code === 'commander.version' || error.code === 'commander.help' ? EXIT.ok : EXIT.invalid;
  }
  if (error instanceof InvalidInputError) {
    for (const p of error.problems) stderr.write(`${forTerminal(formatProblem(p))}\n`);
    stderr.write(`${error.problems.length} problem${error.problems.length === 1 ? '' : 's'}; nothing was sent\n`);
  } else if (error instanceof SitefleetError) {
    stderr.write(`sitefleet: ${forTerminal(error.message)}\n${error.advice ? `${error.advice}\n` : ''}`);
  } else {
    stderr.write(`sitefleet: unexpected error: ${((error as Error)?.stack ?? String(error)).split('\n').map(forTerminal).join('\n')}\n`);
    return EXIT.someFailed;
  }
  return error.exitCode;
}
