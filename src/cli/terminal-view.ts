import type { Io } from '../app/io.js';
import type { View } from '../app/view.js';
import { Progress } from './progress.js';
import { painter, renderPlan, renderSummary, warningLine } from './render.js';
import { progressLine } from './run-line.js';

/**
 * The app's view on a terminal: colour where stdout wants it, prompts on stdin, status lines on an
 * interactive stderr only, and nothing of the status lines with `--quiet` (asked when drawn, since the
 * view exists before the flags are read).
 */
export function terminalView(io: Io, quiet: () => boolean): View {
  const lines = () => !quiet() && io.stderr.isTTY === true;
  return {
    plan: (plan, verbose) => renderPlan(plan, verbose, painter(io), io.now()),
    summary: (report, reportPath) => renderSummary(report, reportPath, painter(io)),
    warning: warningLine,
    // The prompt (readline) loads only when a command is about to write.
    confirmWrites: async (command, question, yes) => (await import('./confirm.js')).confirmWrites(io, command, question, yes),
    counter: (total, label) => new Progress(total, io.stderr, lines(), label),
    runLine: (steps, waits, sources) => progressLine({ steps, waits }, sources, io.stderr, lines()),
  };
}
