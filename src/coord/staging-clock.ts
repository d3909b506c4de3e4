import type { StagingClock } from '../plan/staging-first.js';
import type { Coordination } from './types.js';

/**
 * What the planner judges staging with: the time, and what the company's staging steps recorded as
 * they ended (nothing is recorded here: a version on staging counts only once a staging step of this
 * tool took it and checked it).
 */
export async function stagingClock(coordination: Coordination, company: string, now: number): Promise<StagingClock> {
  return { now, table: await coordination.staging(company).record([]) };
}
