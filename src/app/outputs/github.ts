import type { RunOutput } from './output.js';

/**
 * Under GitHub Actions: the Markdown summary appended to `GITHUB_STEP_SUMMARY` (GitHub's own file,
 * appended to by design; the runner makes it a regular file in its temporary folder, so it too is
 * opened without following a link, and must not be one of the command's inputs), and an `::error`
 * annotation per failure on stdout, even with --quiet: a machine reads them.
 */
export const github: RunOutput = {
  name: 'github',
  files: ({ env }) => (env.GITHUB_STEP_SUMMARY ? [{ flag: 'GITHUB_STEP_SUMMARY', path: env.GITHUB_STEP_SUMMARY, kind: 'step-summary' }] : []),
  async write({ env, report, io }) {
    if (!env.GITHUB_STEP_SUMMARY && env.GITHUB_ACTIONS !== 'true') return;
    const [{ githubAnnotations, markdownSummary }, { appendOutput }] = await Promise.all([
      import('../../report/ci-formats.js'),
      import('../../util/output-file.js'),
    ]);
    if (env.GITHUB_STEP_SUMMARY)
      appendOutput({ flag: 'GITHUB_STEP_SUMMARY', path: env.GITHUB_STEP_SUMMARY, kind: 'step-summary' }, markdownSummary(report.value, report.path));
    if (env.GITHUB_ACTIONS === 'true') for (const line of githubAnnotations(report.value)) io.stdout.write(`${line}\n`);
  },
};
