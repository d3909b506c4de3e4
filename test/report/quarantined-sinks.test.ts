import { describe, expect, it } from 'vitest';
import { runPage } from '../../src/report/html/run-page.js';
import { summarize, type ReportResult } from '../../src/report/report.js';
import { nightReport } from '../helpers/sinks.js';
import { jsonSummary } from '../../src/notify/run-end.js';
import { slackMessage } from '../../src/notify/slack.js';
import { withheldLines } from '../../src/report/withheld-lines.js';
import type { WithheldDecision } from '../../src/inventory/withheld.js';
import { readBackValidator } from '../../src/util/json-input.js';
import { terminalMessage } from '../../src/util/safe-text.js';

/** The service's words, as hostile as they come: markup, a terminal escape, Slack's own syntax. */
const WHY = 'PHP Fatal error: <script>x</script> \u001b[31m<!channel> in wp-content/plugins/forms/forms.php';

const write = (i: number): ReportResult => ({
  step_id: `0:e${i}`,
  task: 'night',
  action: 'plugins.update',
  target: { site: `site-${i}`, environment: 'live', env_id: `e${i}` },
  request: { method: 'PUT', path: `/sites/environments/e${i}/plugins`, body: { name: 'forms', update_version: '2.0.0' } },
  status: 'failed',
  http_status: 202,
  operation_id: `op${i}`,
  attempts: 1,
  error: null,
  reason: 'the site broke; restored',
});
const results = [write(1), write(2)];
const report = nightReport(results, {
  quarantined: [
    { kind: 'plugin', name: 'forms', version: '2.0.0', why: WHY, at: '2026-11-20T02:03:00.000Z', env_id: 'e1', site: 'site-1', environment: 'live' },
    { kind: 'plugin', name: 'forms', version: '2.0', why: 'HTTP 500', at: '2026-11-20T02:04:00.000Z', env_id: 'e2', site: 'site-2', environment: 'live' },
  ],
});
const end = {
  name: 'night',
  exitCode: 1,
  startedAt: new Date(report.started_at),
  finishedAt: new Date(report.finished_at),
  report: { value: report, path: 'r.json' },
};

describe('the versions a night quarantined, in its report and every sink', () => {
  it('the report says so, and reads back against its schema (one schema for writer and reader)', () => {
    const validate = readBackValidator('report.schema.json');
    expect(validate(report), JSON.stringify(validate.errors)).toBe(true);
    expect(validate({ ...report, quarantined: [{ kind: 'plugin', name: 'forms', version: '2.0.0', why: 'x' }] })).toBe(false);
  });

  it('the JSON webhook: each version once, with where and when it first broke, how many it broke, and what sends it again; the text exact', () => {
    const body = jsonSummary(end, new Date('2026-11-20T02:10:01Z'));
    expect(body.quarantined).toEqual([
      {
        kind: 'plugin',
        name: 'forms',
        version: '2.0.0',
        why: WHY,
        at: '2026-11-20T02:03:00.000Z',
        env_id: 'e1',
        site: 'site-1',
        environment: 'live',
        environments: 2,
        override: 'sitefleet quarantine release forms@2.0.0 --kind plugin',
      },
    ]);
  });

  it('Slack: a line per version, its markup and the service’s escaped', () => {
    const text = JSON.stringify(slackMessage(end, new Date('2026-11-20T02:10:01Z')).blocks);
    expect(text).toContain('• quarantined: plugin forms 2.0.0 broke site-1/live (2 environments in all) at 2026-11-20T02:03:00.000Z: PHP Fatal error');
    expect(text).toContain('to send it again: `sitefleet quarantine release forms@2.0.0 --kind plugin`');
    expect(text).not.toContain('<!channel>');
    expect(text).not.toContain('<script>');
  });

  it('the run page: a section of its own, escaped', () => {
    const page = runPage({ report, reportPath: 'r.json', times: { missing: 'none' } });
    expect(page).toContain('<h2>Quarantined by this run (1)</h2>');
    expect(page).toMatch(
      /<tr class="quarantined" data-kind="plugin" data-name="forms" data-version="2\.0\.0">\s*<td>plugin forms 2\.0\.0<\/td>\s*<td class="n">2<\/td>/,
    );
    expect(page).toContain('<code>sitefleet quarantine release forms@2.0.0 --kind plugin</code>');
    expect(page).not.toContain('<script>x');
    expect(page).not.toContain('\u001b');
    // A report that does not say (an older release's) has no such section.
    const { quarantined: _, ...older } = report;
    expect(runPage({ report: older, reportPath: 'r.json', times: { missing: 'none' } })).not.toContain('Quarantined by this run');
  });
});

describe('an update held by a store line that cannot be read, in the sinks', () => {
  const held: WithheldDecision = {
    plugin: 'seo',
    code: 'unreadable_record',
    installed: '1.0.0',
    version: '4.0.0',
    store: 'quarantine',
    where: '/state/quarantine/c.jsonl line 7',
    why: 'not an entry this release can read',
    override: 'repair or delete /state/quarantine/c.jsonl line 7',
  };
  const skipped: ReportResult = { ...write(3), status: 'skipped', request: null, step_id: null, reason: 'left alone', withheld: [held] };

  it('says the line, and what to do, in the plan’s lines, Slack and the run page', () => {
    expect(withheldLines([{ task: 'night', withheld: [held] }]).map(terminalMessage)).toEqual([
      "unreadable_record (night), repair or delete /state/quarantine/c.jsonl line 7: plugin seo 4.0.0 left alone on 1 environment: the company's quarantine has a line that cannot be read and may name it (/state/quarantine/c.jsonl line 7: not an entry this release can read)",
    ]);
    const withHeld = { ...report, results: [...results, skipped], summary: summarize([...results, skipped]) };
    expect(readBackValidator('report.schema.json')(withHeld)).toBe(true);
    const text = JSON.stringify(slackMessage({ ...end, report: { value: withHeld, path: 'r.json' } }, new Date()).blocks);
    expect(text).toContain('held: `unreadable_record` plugin seo 4.0.0 left alone on 1 environment');
    const page = runPage({ report: withHeld, reportPath: 'r.json', times: { missing: 'none' } });
    expect(page).toContain('quarantine that cannot be read: /state/quarantine/c.jsonl line 7');
  });
});
