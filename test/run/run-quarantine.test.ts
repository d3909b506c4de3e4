import { describe, expect, it } from 'vitest';
import type { Step } from '../../src/plan/plan.js';
import { RunQuarantine } from '../../src/run/run-quarantine.js';
import type { StepResult } from '../../src/run/types.js';

const ENV = 'e1';
/** A write of `task`: plugins in bulk as a task that does not isolate plans it (no `updates` on its step: only the precondition's versions). */
function bulk(task: number, env: string, versions: Record<string, string>): Step {
  const names = Object.keys(versions);
  return {
    id: `${task}:${env}`,
    task: `task ${task}`,
    task_index: task,
    action: 'plugins.update',
    target: { env_id: env, site: `site-${env}`, environment: 'live' },
    endpoint: 'bulkUpdatePlugins',
    method: 'PUT',
    path: `/sites/environments/${env}/plugins/bulk-update`,
    params: {},
    body: { plugins: names.map((name) => ({ name })) },
    idempotent: true,
    lock: env,
    precondition: names.map((n) => `${n} 1.0 → ${versions[n]}`).join(', '),
  };
}

/** Isolation's end on the first task's write: `culprit` at `version` broke the site alone. */
function isolated(step: Step, culprit: string, version: string): StepResult {
  const change = { plugin: culprit, from: '1.0', to: version };
  return {
    step_id: step.id,
    status: 'failed',
    http_status: 200,
    operation_id: 'op',
    attempts: 1,
    error: null,
    reason: 'isolated',
    isolation: { updates: [change], rounds: [{ names: [culprit], status: 'broken' }], outcome: 'found', culprits: [change], restores: 2 },
  };
}

describe("the run's quarantine", () => {
  it("leaves a culprit one task found out of another task's bulk write, whose step keeps no list of updates", () => {
    const q = new RunQuarantine();
    const first = { ...bulk(0, ENV, { forms: '2.0.0', seo: '3.1.0' }), updates: [{ plugin: 'forms', from: '1.0', to: '2.0.0' }] };
    q.addEnd(first, isolated(first, 'forms', '2.0.0'));
    const later = q.trim(bulk(1, 'e2', { forms: '2.0.0', seo: '3.1.0' }));
    expect(later).toMatchObject({ step: { body: { plugins: [{ name: 'seo' }] }, precondition: 'seo 1.0 → 3.1.0', trimmed: true } });
    expect(q.trim(bulk(1, 'e3', { forms: '2.0.0' }))).toEqual({ skip: expect.stringContaining('forms 2.0.0 (it broke site-e1 live)') as unknown });
  });

  it('keys versions as the stores do: 6.0 found is 6.0.0 offered', () => {
    const q = new RunQuarantine();
    const first = bulk(0, ENV, { forms: '6.0' });
    q.addEnd(first, isolated(first, 'forms', '6.0'));
    // Steps that keep their list (an isolating task's), so that the version alone is judged here.
    const listed = (env: string, versions: Record<string, string>) => ({
      ...bulk(1, env, versions),
      updates: Object.entries(versions).map(([plugin, to]) => ({ plugin, from: '1.0', to })),
    });
    expect(q.trim(listed('e2', { forms: '6.0.0', seo: '3.1.0' }))).toMatchObject({ step: { body: { plugins: [{ name: 'seo' }] } } });
    // Another version of the culprit is judged as usual.
    expect(q.trim(listed('e3', { forms: '6.0.1' }))).toEqual({ step: listed('e3', { forms: '6.0.1' }) });
  });
});
