import type { HealthVerdict } from '../../health/http/probe.js';
import { updatesBrokenBefore, type HealthSpec } from '../../health/spec.js';
import { healthRecord } from '../health-gate.js';
import type { BeforeHeldReason, StepResult } from '../types.js';

/** What the look before a guarded write says of sending it: send it, or hold it and why. */
export type BeforeDecision = 'send' | BeforeHeldReason['code'];

/**
 * Whether a guarded write goes, from the look at its page before it, as a decision table: the first
 * row that matches decides. A guard that could not see holds (ManageWP's safe updates stop when the
 * check before the update does not answer 200): a `health.url` that reaches no site would otherwise
 * make every site "broken before" and update the whole fleet unchecked.
 *
 * | the look before                                             | when_broken_before | the write                               |
 * | none taken (no page; shared with the group's first; resumed) | any                | sent                                    |
 * | refused: an address a check may not reach, nothing fetched  | any                | held `unseen` (¹)                       |
 * | healthy                                                     | any                | sent                                    |
 * | not healthy                                                 | update             | sent: listed broken before, not blamed  |
 * | no answer at all (DNS, refused connection, timeout, TLS)    | hold (default)     | held `unseen`                           |
 * | an answer, not healthy (4xx, 5xx, a `not_contains` text)    | hold (default)     | held `broken_before`                    |
 *
 * No look is taken where the step has no page, where a grouped write (rollout.together) shares the
 * look its group's first write took, and where a resumed group has no baseline (a write of it went out
 * before the interruption). (¹) The executor ends such a step first, as `on_missing_domain` says;
 * the row keeps the table total and closed.
 */
export function beforeWrite(before: HealthVerdict | undefined, spec: HealthSpec): BeforeDecision {
  if (!before) return 'send';
  // Never sent unchecked, whatever the task says: nothing was fetched there, and nothing may be.
  if (before.refused) return 'unseen';
  if (before.healthy || updatesBrokenBefore(spec)) return 'send';
  return before.unanswered ? 'unseen' : 'broken_before';
}

const OVERRIDE: Record<BeforeHeldReason['code'], string> = {
  unseen: 'check that health.url reaches this site (its template, DNS, the site answering); nothing was sent: run again once its page answers',
  broken_before:
    'look at the site: its page was not healthy before the write, and nothing was sent; health.when_broken_before: update sends to such sites, not blaming the write',
};

/**
 * The result of a guarded write that is not sent because its page was not seen healthy before it
 * (beforeWrite): `held`, nothing sent, its health `unhealthy before` with what the look saw; undefined
 * when the write goes. It counts against the failure budget (`counts_against_budget`): a template that
 * reaches no site holds the canary and the budget stops the rollout there.
 */
export function heldBefore(stepId: string, url: string | undefined, before: HealthVerdict | undefined, spec: HealthSpec | undefined): StepResult | undefined {
  if (!url || !spec || !before) return undefined;
  const code = beforeWrite(before, spec);
  if (code === 'send') return undefined;
  const held: BeforeHeldReason = { code, url, detail: before.detail, override: OVERRIDE[code], counts_against_budget: true };
  const reason =
    code === 'unseen'
      ? `unseen: no answer from ${url} before the write (${before.detail}); not updated`
      : `broken_before: ${url} answered ${before.detail} before the write; not updated`;
  return {
    step_id: stepId,
    status: 'held',
    http_status: null,
    operation_id: null,
    attempts: 0,
    error: null,
    reason,
    held,
    health: healthRecord(url, before, undefined),
  };
}
