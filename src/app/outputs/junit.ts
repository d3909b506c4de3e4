import type { RunOutput } from './output.js';

/** `--junit FILE`: a test suite per task, a test case per step, for CI's test view. */
export const junit: RunOutput = {
  name: 'junit',
  option: { flags: '--junit <file>', description: 'also write the outcome as JUnit XML: a test suite per task, a test case per step' },
  files: ({ flags }) => (flags.junit ? [{ flag: '--junit', path: flags.junit, kind: 'junit' }] : []),
  async write({ flags, report }) {
    if (!flags.junit) return;
    const [{ junitXml }, { writeOutput }] = await Promise.all([import('../../report/ci-formats.js'), import('../../util/output-file.js')]);
    writeOutput({ flag: '--junit', path: flags.junit, kind: 'junit' }, junitXml(report.value));
  },
};
