import { appendFileSync } from 'node:fs';
import { githubAnnotations, junitXml, markdownSummary } from '../report/ci-formats.js';
import type { Report } from '../report/report.js';
import { writeFileAtomic } from '../util/atomic-write.js';

export interface CiOutputOptions {
  /** `--junit FILE` */
  junit?: string;
  /** `--summary-md FILE` */
  summaryMd?: string;
}

/**
 * What CI and cron users read besides the report: JUnit XML, a Markdown summary (also appended to
 * `GITHUB_STEP_SUMMARY` when GitHub Actions sets it), and `::error` annotations under GitHub Actions.
 */
export function writeCiOutputs(report: Report, reportPath: string, options: CiOutputOptions, env = process.env, stdout = process.stdout): void {
  if (options.junit) writeFileAtomic(options.junit, junitXml(report));
  const markdown = options.summaryMd || env.GITHUB_STEP_SUMMARY ? markdownSummary(report, reportPath) : '';
  if (options.summaryMd) writeFileAtomic(options.summaryMd, markdown);
  if (env.GITHUB_STEP_SUMMARY) appendFileSync(env.GITHUB_STEP_SUMMARY, markdown);
  if (env.GITHUB_ACTIONS === 'true') for (const line of githubAnnotations(report)) stdout.write(`${line}\n`);
}
