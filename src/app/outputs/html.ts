import type { RunOutput } from './output.js';

/** `--html FILE`: the run's page (see `sitefleet report`), written from the final report and its journal. */
export const htmlPage: RunOutput = {
  name: 'html',
  option: { flags: '--html <file>', description: "also write the run's page: one self-contained HTML file (tasks, timeline, failed steps)" },
  files: ({ flags }) => (flags.html ? [{ flag: '--html', path: flags.html, kind: 'html' }] : []),
  async write({ flags, report }) {
    if (!flags.html) return;
    const { runPageOf, writePage } = await import('../report-pages.js');
    await writePage(runPageOf(report.path, report.value, {}, flags.html), { html: flags.html });
  },
};
