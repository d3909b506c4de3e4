import { join } from 'node:path';

export interface RunOptions {
  dryRun?: boolean;
  report?: string;
  yes?: boolean;
  verbose?: boolean;
  wait?: boolean;
  waitLock?: boolean;
  junit?: string;
  summaryMd?: string;
  /** `--no-preflight` sets it false: no look at the API keys before the run. */
  preflight?: boolean;
}

export function defaultReportPath(dir: string | undefined, now = new Date()): string {
  return join(dir ?? '.', `sitefleet-report-${now.toISOString().replace(/[:.]/g, '-')}.json`);
}

export const EXIT_CODES_HELP =
  '\nExit codes: 0 all accepted or succeeded, 1 some failed or unknown, 2 invalid input or usage,\n3 run stopped (authentication, failure budget), 4 another run holds the lock, 130 interrupted.\n';
