import type { RunOutput } from './output.js';

/** The JSON report, replaced atomically: what a resume, a status and tomorrow's `--history` read. */
export const reportFile: RunOutput = {
  name: 'report',
  files: ({ report }) => [{ flag: report.flag, path: report.path, kind: 'report' }],
  async write({ report }) {
    const { writeJsonAtomic } = await import('../../report/report.js');
    writeJsonAtomic({ flag: report.flag, path: report.path, kind: 'report' }, report.value);
  },
};
