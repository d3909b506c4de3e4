import { join } from 'node:path';
import type { WindowOptions } from './window.js';
import type { OutputFlags } from './finish-run.js';

export interface RunOptions extends WindowOptions, OutputFlags {
  dryRun?: boolean;
  report?: string;
  yes?: boolean;
  verbose?: boolean;
  wait?: boolean;
  waitLock?: boolean;
  /** `--no-preflight` sets it false: no look at the API keys before the run. */
  preflight?: boolean;
  /** A plan `plan --out` saved: the run sends its steps whose precondition still holds, and no others. */
  plan?: string;
  /** With `plan`: any changed step refuses the whole run (exit 2). */
  strictPlan?: boolean;
  /** With `plan`: older than this (ms) is refused. @default DEFAULT_MAX_PLAN_AGE (24h) */
  maxPlanAge?: number;
}

/** @default for `--max-plan-age`: a plan reviewed in the afternoon is applied that night, not next week. */
export const DEFAULT_MAX_PLAN_AGE = '24h';

export function defaultReportPath(dir: string | undefined, now = new Date()): string {
  return join(dir ?? '.', `sitefleet-report-${now.toISOString().replace(/[:.]/g, '-')}.json`);
}
