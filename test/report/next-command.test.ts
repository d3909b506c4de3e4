import { describe, expect, it } from 'vitest';
import { nextCommand } from '../../src/report/ci-formats.js';
import type { Report, ReportResult } from '../../src/report/report.js';

const held = (step: string, counted: boolean): Partial<ReportResult> => ({
  task: 't',
  step_id: step,
  status: 'held',
  target: {},
  reason: null,
  held: {
    code: 'visual_difference',
    changed_percent: 3,
    url: 'https://example.com/',
    diff: null,
    override: 'raise hold_over',
    ...(counted ? { counts_against_budget: true as const } : {}),
  },
});

function stopped(results: Partial<ReportResult>[]): Report {
  return {
    mode: 'run',
    stopped: { kind: 'budget', reason: 'failure budget exceeded' },
    results: [...results, { task: 't', step_id: 'c', status: 'skipped', target: {}, reason: 'not sent' }],
  } as unknown as Report;
}

/** The resume a budget stop suggests lets through as many failures as the run counted, or it stops at once. */
describe('nextCommand after a budget stop', () => {
  it('counts held steps whose task said fail_on_hold, as the executor did', () => {
    expect(nextCommand(stopped([held('a', true), held('b', true)]), 'r.json')?.argv).toEqual(['resume', 'r.json', '--max-failures', '2']);
  });

  it('does not count held steps that did not count against the budget', () => {
    expect(nextCommand(stopped([held('a', false), { task: 't', step_id: 'b', status: 'failed', target: {}, reason: 'x' }]), 'r.json')?.argv).toEqual([
      'resume',
      'r.json',
      '--max-failures',
      '1',
    ]);
  });
});

/** A life a halt cut short (isolation rounds left, a look not taken): resume finishes it, and after a budget stop the command carries the budget it needs. */
describe('nextCommand with lives left', () => {
  const isolating: Partial<ReportResult> = {
    task: 't',
    step_id: 'a',
    status: 'failed',
    target: {},
    reason: 'isolating',
    isolation: { updates: [], rounds: [], outcome: 'isolating', culprits: [], restores: 1 },
  };
  const notLooked: Partial<ReportResult> = {
    task: 't',
    step_id: 'b',
    status: 'held',
    target: {},
    reason: 'not_looked',
    held: { code: 'not_looked', url: 'https://example.com/', detail: 'interrupted twice', override: 'resume' },
  };

  it('an isolation left after a budget stop: resume with --max-failures, though no step was left unsent', () => {
    const report = { mode: 'run', stopped: { kind: 'budget', reason: 'failure budget exceeded' }, results: [isolating] } as unknown as Report;
    expect(nextCommand(report, 'r.json')?.argv).toEqual(['resume', 'r.json', '--max-failures', '1']);
  });

  it('a look a halt kept from happening: resume', () => {
    const report = { mode: 'run', stopped: { kind: 'interrupted', reason: 'interrupted' }, results: [notLooked] } as unknown as Report;
    expect(nextCommand(report, 'r.json')?.argv).toEqual(['resume', 'r.json']);
  });
});
