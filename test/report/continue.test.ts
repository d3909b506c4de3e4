import { describe, expect, it } from 'vitest';
import { continueCommand } from '../../src/report/ci-formats.js';
import type { Report } from '../../src/report/report.js';

const report = (status: 'skipped' | 'accepted'): Report =>
  ({ mode: 'run', stopped: null, results: [{ step_id: '0:a', task: 't', status, target: {} }] }) as unknown as Report;

describe('the command that carries on a run', () => {
  it('quotes the report path for a shell, in every sink that offers it', () => {
    expect(continueCommand(report('skipped'), '/var/log/sitefleet/r.json')).toBe('sitefleet resume /var/log/sitefleet/r.json');
    expect(continueCommand(report('accepted'), "/srv/my reports/it's.json")).toBe("sitefleet status '/srv/my reports/it'\\''s.json' --wait");
  });
});
