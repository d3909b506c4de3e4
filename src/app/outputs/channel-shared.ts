import type { DeliveryPolicy } from '../../notify/deliver.js';
import type { RunEnd } from '../../notify/run-end.js';
import type { ChannelSource } from '../../notify/channels.js';
import { exitCodeOf } from '../../report/report.js';
import type { Abandoned, Finished, OutputStart } from './output.js';

/**
 * What the outputs that tell someone (ping, webhooks, metrics) share: where their settings are read,
 * how they send, and the run's end as they tell it.
 */
export function sourceOf(start: OutputStart): ChannelSource {
  return { flags: start.flags, settings: start.playbook?.settings, env: start.env };
}

/**
 * Ten seconds an answer, three tries, a second and then two between them. SITEFLEET_NOTIFY_BACKOFF_MS
 * sets the first wait (the tests make it a few milliseconds, so that three tries take no real seconds).
 */
export async function policyOf(env: OutputStart['env']): Promise<DeliveryPolicy> {
  const { DEFAULT_DELIVERY } = await import('../../notify/deliver.js');
  const backoff = Number(env.SITEFLEET_NOTIFY_BACKOFF_MS);
  return { ...DEFAULT_DELIVERY, env, ...(Number.isFinite(backoff) && backoff >= 0 && env.SITEFLEET_NOTIFY_BACKOFF_MS ? { backoffMs: backoff } : {}) };
}

/** A run that ended with its report, as the channels tell it. */
export function endOfFinished(finished: Finished): RunEnd {
  const report = finished.report.value;
  return {
    name: report.name,
    company: report.company,
    runId: report.run_id,
    exitCode: exitCodeOf(report),
    startedAt: new Date(report.started_at),
    finishedAt: new Date(report.finished_at),
    report: { value: report, path: finished.report.path },
    rateLimited: finished.rateLimited,
  };
}

/** A run an error ended before its report: its exit code and the error, timed from when it started. */
export function endOfAbandoned({ started, exitCode, error }: Abandoned): RunEnd {
  return { name: started.name, company: started.playbook?.company, exitCode, startedAt: started.startedAt, finishedAt: new Date(), error };
}
