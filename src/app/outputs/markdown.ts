import type { RunOutput } from './output.js';

/** `--summary-md FILE`: the summary as Markdown, for a pull request comment or a chat message. */
export const markdown: RunOutput = {
  name: 'markdown',
  option: { flags: '--summary-md <file>', description: 'also write a Markdown summary (appended to $GITHUB_STEP_SUMMARY too, when set)' },
  files: ({ flags }) => (flags.summaryMd ? [{ flag: '--summary-md', path: flags.summaryMd, kind: 'summary-md' }] : []),
  async write({ flags, report }) {
    if (!flags.summaryMd) return;
    const [{ markdownSummary }, { writeOutput }] = await Promise.all([import('../../report/ci-formats.js'), import('../../util/output-file.js')]);
    writeOutput({ flag: '--summary-md', path: flags.summaryMd, kind: 'summary-md' }, markdownSummary(report.value, report.path));
  },
};
