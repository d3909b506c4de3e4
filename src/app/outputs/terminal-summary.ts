import type { RunOutput } from './output.js';

/** The summary a person reads at the end: counts per task, what failed and why, the command that continues. */
export const terminalSummary: RunOutput = {
  name: 'summary',
  files: () => [],
  write({ report, io, view, quiet, before = [], after = [] }) {
    if (quiet) return;
    io.stdout.write(`${[...before, view.summary(report.value, report.path), ...after].join('\n')}\n`);
  },
};
