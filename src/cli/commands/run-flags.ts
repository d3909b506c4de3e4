import { EXIT_MEANING } from '../../errors.js';
import type { Command } from 'commander';
import { RUN_OUTPUTS, type RunOutput } from '../../app/finish-run.js';

export const EXIT_CODES_HELP = `\nExit codes: ${Object.entries(EXIT_MEANING)
  .map(([code, meaning]) => `${code} ${meaning}`)
  .join(', ')}.\n`;

/** `--not-after` and `--wait-window`, on the commands that send (run, resume). */
export function addWindowOptions(command: Command): Command {
  return command
    .option('--not-after <time>', 'send no write after TIME: HH:MM (local zone, or TZ) or ISO 8601; steps not sent by then end skipped (exit 5)')
    .option('--wait-window', 'outside settings.window, wait for it to open instead of exiting 5');
}

/** The output flags (`--junit`, `--summary-md`, …) of a command that ends a run, as its outputs declare them. */
export function addOutputOptions(command: Command, outputs: readonly RunOutput[] = RUN_OUTPUTS): Command {
  for (const { option } of outputs) if (option) command.option(option.flags, option.description);
  return command;
}
