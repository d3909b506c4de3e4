import type { RunOutput } from './output.js';

/** The summary a person reads at the end: counts per task, what failed and why, the command that continues. */
export const terminalSummary: RunOutput = {
  name: 'summary',
  files: () => [],
  async write({ report, io, quiet, before = [], after = [] }) {
    if (quiet) return;
    const { painter, renderSummary } = await import('../render.js');
    io.stdout.write(`${[...before, renderSummary(report.value, report.path, painter(io)), ...after].join('\n')}\n`);
  },
};
