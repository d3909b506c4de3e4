import { describe, expect, it } from 'vitest';
import { recordPage } from '../../src/report/html/record-page.js';
import { runPage } from '../../src/report/html/run-page.js';
import type { ReportResult } from '../../src/report/report.js';
import { nightReport } from '../helpers/sinks.js';
import { withheldLines } from '../../src/report/withheld-lines.js';
import { jsonSummary } from '../../src/notify/run-end.js';
import { slackMessage } from '../../src/notify/slack.js';
import type { WithheldDecision } from '../../src/inventory/withheld.js';
import { terminalMessage } from '../../src/util/safe-text.js';

/** The service's words, as hostile as they come: markup, a terminal escape, Slack's own syntax. */
const WHY = 'PHP Fatal error: <script>x</script> \u001b[31m<!channel> in wp-content/plugins/forms/forms.php';

const quarantined: WithheldDecision = {
  plugin: 'forms',
  code: 'quarantined',
  installed: '1.0.0',
  version: '2.0.0',
  since: '2026-11-19T02:00:00.000Z',
  env_id: 'e9',
  site: 'shop',
  environment: 'live',
  broken_environments: 2,
  why: WHY,
  override: 'sitefleet quarantine release forms@2.0.0 --kind plugin',
};
const retry: WithheldDecision = {
  theme: 'calm',
  code: 'retry_later',
  installed: '1.0.0',
  version: '1.1.0',
  retry_at: '2026-11-21T02:00:00.000Z',
  failures: 1,
  last_failed_at: '2026-11-20T02:00:00.000Z',
  why: 'operation failed: the service could not complete the change',
  override: 'sitefleet retry clear calm@1.1.0 --kind theme',
};

function skipped(i: number, withheld: WithheldDecision[]): ReportResult {
  return {
    step_id: null,
    task: 'night',
    action: 'plugins.update',
    target: { site: `site-${i}`, environment: 'live', env_id: `e${i}` },
    request: null,
    status: 'skipped',
    http_status: null,
    operation_id: null,
    attempts: 0,
    error: null,
    reason: 'left alone',
    withheld,
  };
}

const results = [skipped(1, [quarantined]), skipped(2, [quarantined, retry]), skipped(3, [])];
const report = nightReport(results);
const end = {
  name: 'night',
  exitCode: 0,
  startedAt: new Date(report.started_at),
  finishedAt: new Date(report.finished_at),
  report: { value: report, path: 'r.json' },
};

describe('what the company’s history withheld, in every sink', () => {
  it('the plan’s lines: each version once, quarantines first, with the environments, the date and the override; the service’s words made safe', () => {
    const lines = withheldLines(results).map(terminalMessage);
    expect(lines).toHaveLength(2);
    expect(lines[0]).toMatch(
      /^quarantined \(night\), sitefleet quarantine release forms@2\.0\.0 --kind plugin: plugin forms 2\.0\.0 left alone on 2 environments: it broke shop\/live at 2026-11-19T02:00:00\.000Z \(2 environments in all\): PHP Fatal error/,
    );
    expect(lines[0]).not.toContain('\u001b');
    expect(lines[1]).toContain(
      'retry_later (night), sitefleet retry clear calm@1.1.0 --kind theme: theme calm 1.1.0 left alone on 1 environment: not before 2026-11-21T02:00:00.000Z, it failed once',
    );
  });

  it('the JSON webhook carries each decision with its environments, the service’s text exactly', () => {
    const body = jsonSummary(end, new Date('2026-11-20T02:10:01Z'));
    expect(body.withheld).toEqual([
      { task: 'night', ...quarantined, environments: 2 },
      { task: 'night', ...retry, environments: 1 },
    ]);
  });

  it('Slack lists them as held, its own markup escaped', () => {
    const text = JSON.stringify(slackMessage(end, new Date('2026-11-20T02:10:01Z')).blocks);
    expect(text).toContain('held: `quarantined` plugin forms 2.0.0 left alone on 2 environments');
    expect(text).toContain('held: `retry_later` theme calm 1.1.0');
    expect(text).not.toContain('<!channel>');
  });

  it('the run page and the monthly record show them, escaped', () => {
    const page = runPage({ report, reportPath: 'r.json', times: { missing: 'none' } });
    expect(page).toContain('<table class="withheld">');
    expect(page).toContain('sitefleet quarantine release forms@2.0.0 --kind plugin');
    expect(page).not.toContain('<script>x');
    const record = recordPage({ reports: [report] });
    expect(record.match(/class="withheld" data-code="quarantined"/g)).toHaveLength(2);
    expect(record).toContain('calm 1.0.0 → 1.1.0 left alone, to retry after 2026-11-21');
    expect(record).not.toContain('<script>x');
  });
});
