import { describe, expect, it } from 'vitest';
import { ageWords, recordPage } from '../../src/report/html/record-page.js';
import { runPage } from '../../src/report/html/run-page.js';
import { runTimes } from '../../src/report/html/spans.js';
import type { Report, ReportResult } from '../../src/report/report.js';
import type { JournalRecord } from '../../src/run/journal.js';
import { nightReport } from '../helpers/sinks.js';

/** Issue 56, part 5: the pages in the order a night ran, backup ages a person reads, and the record's summary first. */
const T0 = Date.parse('2026-11-20T02:00:00.000Z');
const HOUR = 3_600_000;

function core(i: number, wave: number, extra: Partial<ReportResult> = {}): ReportResult {
  return {
    step_id: `0:${i}`,
    task: 'core',
    action: 'core.update',
    target: { site: `blue-${String(i).padStart(3, '0')}`, environment: 'live', env_id: `e${i}` },
    request: { method: 'POST', path: `/sites/environments/e${i}/core`, body: { wp_command: 'wp core update --version=6.7.1' } },
    status: 'succeeded',
    http_status: 202,
    operation_id: `op-${i}`,
    attempts: 1,
    error: null,
    reason: null,
    wave,
    precondition: 'wordpress 6.6.2 → 6.7.1',
    ...extra,
  };
}

function journalOf(report: Report, order: readonly ReportResult[]): JournalRecord[] {
  const records: JournalRecord[] = [
    { t: 'start', v: 1, run_id: report.run_id, playbook: 'p.yaml', report: 'r.json', started_at: report.started_at, plan: { settings: {} } as never },
  ];
  order.forEach((r, i) => {
    records.push({ t: 'intent', step: r.step_id!, attempt: 1, at: T0 + i * 1000 });
    records.push({ t: 'result', step: r.step_id!, result: { ...r, step_id: r.step_id! }, at: T0 + i * 1000 + 900 });
  });
  return records;
}

describe('the run page: the timeline in the order the night ran', () => {
  it('the canary, then wave 1, then wave 2, whatever order the report lists their environments in', () => {
    // The plan lists environments in its own order: a wave-2 environment may come first.
    const results = [core(1, 2), core(2, 0), core(3, 1), core(4, 2), core(5, 1)];
    const report = nightReport(results);
    const ran = [results[1]!, results[2]!, results[4]!, results[0]!, results[3]!];
    const page = runPage({ report, reportPath: '/r.json', times: runTimes(journalOf(report, ran)) });
    const svg = page.slice(page.indexOf('<svg class="timeline"'));
    const labels = [...svg.matchAll(/<text x="0" y="\d+">([^<]*)<\/text>/g)].map((m) => m[1]);
    expect(labels).toEqual(['core, wave 0 (canary or first)', 'core, wave 1', 'core, wave 2']);
  });
});

describe('the monthly record', () => {
  const backup: ReportResult = {
    ...core(1, 0),
    role: 'backup',
    action: 'core.update',
    request: { method: 'POST', path: '/sites/environments/e1/backups', body: { tag: 'sitefleet-before-core' } },
    precondition: undefined,
  };

  it('gives a backup’s age in hours under a day', () => {
    const report = nightReport([backup, core(1, 0)], { started_at: new Date(T0).toISOString(), finished_at: new Date(T0 + 5 * HOUR + 60_000).toISOString() });
    const page = recordPage({ reports: [report] });
    expect(page).toContain('5 hours old');
    expect(page).not.toContain('0 days old');
    expect([ageWords(20 * 60_000), ageWords(HOUR), ageWords(23 * HOUR), ageWords(25 * HOUR), ageWords(72 * HOUR)]).toEqual([
      'under an hour old',
      '1 hour old',
      '23 hours old',
      '1 day old',
      '3 days old',
    ]);
  });

  it('begins with a summary: sites, updates, restores, isolations and quarantined versions', () => {
    const restored = core(2, 1, {
      status: 'failed',
      reason: 'health check failed',
      restore_point: { tag: 't', backup_id: 3 },
      restored: { backup_id: 3, operation_id: 'r', status: 'succeeded' },
    });
    const isolated = core(3, 1, {
      action: 'plugins.update',
      status: 'failed',
      request: { method: 'PUT', path: '/x', body: { plugins: [{ name: 'updraftplus' }, { name: 'jetpack' }] } },
      precondition: 'updraftplus 9.2.2 → 9.3.4, jetpack 3.0.0 → 3.0.4',
      isolation: {
        updates: [
          { plugin: 'updraftplus', from: '9.2.2', to: '9.3.4' },
          { plugin: 'jetpack', from: '3.0.0', to: '3.0.4' },
        ],
        rounds: [],
        outcome: 'found',
        culprits: [{ plugin: 'updraftplus', from: '9.2.2', to: '9.3.4' }],
        restores: 2,
      },
    });
    const report = nightReport([core(1, 0), restored, isolated], {
      quarantined: [{ kind: 'plugin', name: 'updraftplus', version: '9.3.4', why: 'x', at: '2026-11-20T02:05:00.000Z', env_id: 'e3', site: 'blue-003' }],
    });
    const page = recordPage({ reports: [report] });
    const summary = page.slice(page.indexOf('<dl class="facts record-summary">'), page.indexOf('</dl>'));
    expect(page.indexOf('record-summary')).toBeLessThan(page.indexOf('<section class="site"'));
    const fact = (name: string) => new RegExp(`<dt>${name}</dt>\\s*<dd[^>]*>([^<]*)</dd>`).exec(summary)?.[1];
    expect([fact('Sites'), fact('Updates'), fact('Restores'), fact('Isolations'), fact('Quarantined versions')]).toEqual([
      '3',
      '2',
      '1',
      '1',
      '1: updraftplus 9.3.4',
    ]);
    // The isolated write's kept update is listed as done; its culprit only as what stays.
    const site3 = page.slice(page.indexOf('data-site="blue-003"'));
    expect(site3.slice(0, site3.indexOf('Isolated updates'))).toContain('jetpack 3.0.0 → 3.0.4');
    expect(site3.slice(0, site3.indexOf('Isolated updates'))).not.toContain('updraftplus');
  });
});
