import { githubAnnotations, junitXml, markdownSummary } from '../report/ci-formats.js';
import type { Report } from '../report/report.js';
import { appendOutput, writeOutput, type OutputFile } from '../util/output-file.js';

export interface CiOutputOptions {
  /** `--junit FILE` */
  junit?: string;
  /** `--summary-md FILE` */
  summaryMd?: string;
}

/**
 * The files `writeCiOutputs` writes, for the check when the command starts. `GITHUB_STEP_SUMMARY` is
 * GitHub's own file, appended to by design; the runner makes it a regular file in its temporary
 * folder, so it too is opened without following a link, and must not be one of the command's inputs.
 */
export function ciOutputFiles(options: CiOutputOptions, env = process.env): OutputFile[] {
  return [
    ...(options.junit ? [{ flag: '--junit', path: options.junit, kind: 'junit' } as const] : []),
    ...(options.summaryMd ? [{ flag: '--summary-md', path: options.summaryMd, kind: 'summary-md' } as const] : []),
    ...(env.GITHUB_STEP_SUMMARY ? [{ flag: 'GITHUB_STEP_SUMMARY', path: env.GITHUB_STEP_SUMMARY, kind: 'step-summary' } as const] : []),
  ];
}

/**
 * What CI and cron users read besides the report: JUnit XML, a Markdown summary (also appended to
 * `GITHUB_STEP_SUMMARY` when GitHub Actions sets it), and `::error` annotations under GitHub Actions.
 */
export function writeCiOutputs(report: Report, reportPath: string, options: CiOutputOptions, env = process.env, stdout = process.stdout): void {
  for (const output of ciOutputFiles(options, env)) {
    if (output.kind === 'junit') writeOutput(output, junitXml(report));
    else if (output.kind === 'step-summary') appendOutput(output, markdownSummary(report, reportPath));
    else writeOutput(output, markdownSummary(report, reportPath));
  }
  if (env.GITHUB_ACTIONS === 'true') for (const line of githubAnnotations(report)) stdout.write(`${line}\n`);
}
