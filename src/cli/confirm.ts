import { createInterface } from 'node:readline/promises';
import { UsageError } from '../errors.js';
import type { Io } from '../app/io.js';

/** Asks a yes/no question on the terminal; anything but y/yes is a no. */
export async function confirm(io: Pick<Io, 'stdin' | 'stderr'>, question: string): Promise<boolean> {
  const rl = createInterface({ input: io.stdin, output: io.stderr as NodeJS.WritableStream });
  try {
    const answer = await rl.question(`${question} [y/N] `);
    return /^y(es)?$/i.test(answer.trim());
  } finally {
    rl.close();
  }
}

/**
 * Before a command sends writes: `--yes` goes ahead, a terminal is asked, and anything else (cron,
 * CI, a pipe) is refused, since nobody is there to answer. Throws UsageError (exit 2) on a no.
 */
export async function confirmWrites(io: Pick<Io, 'stdin' | 'stderr'>, command: string, question: string, yes: boolean | undefined): Promise<void> {
  if (yes) return;
  if (!io.stdin.isTTY) throw new UsageError(`refusing to ${command} without --yes: this is not an interactive terminal`);
  if (!(await confirm(io, question))) throw new UsageError('not confirmed; nothing was sent');
}
