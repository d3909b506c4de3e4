import { describe, expect, it } from 'vitest';
import { markdownSummary } from '../../src/report/ci-formats.js';
import { type Report, type ReportResult } from '../../src/report/report.js';
import { bypassLines } from '../../src/report/staging-lines.js';
import { jsonSummary, type RunEnd } from '../../src/notify/run-end.js';
import { slackMessage } from '../../src/notify/slack.js';
import type { StagingDecision } from '../../src/plan/staging-first.js';
import { nightReport } from '../helpers/sinks.js';

/** A plugin slug as hostile as the service may name one: Markdown's link, emphasis and table syntax. */
const NAME = 'evil_*[x](https://a.example)|';

const bypassed: StagingDecision = {
  plugin: NAME,
  code: 'staging_bypassed',
  version: '2.5.4',
  staging: { env_id: 's1', environment: 'staging' },
  soaked: '2.5.3',
  why: '2.5.3 soaked on staging is flagged vulnerable',
  override: 'rollout.security_bypass: false stages it first',
};

function write(i: number, staging: StagingDecision[]): ReportResult {
  return {
    step_id: `s${i}`,
    task: 'night',
    action: 'plugins.update',
    target: { site: `site-${i}`, environment: 'live', env_id: `e${i}` },
    request: { method: 'PUT', path: `/sites/environments/e${i}/plugins` },
    status: 'succeeded',
    http_status: 200,
    operation_id: `op-${i}`,
    attempts: 1,
    error: null,
    reason: null,
    staging,
  };
}

const results = [write(1, [bypassed]), write(2, [{ ...bypassed, staging: { env_id: 's2', environment: 'staging' } }])];
const report: Report = nightReport(results);
const end: RunEnd = { name: 'night', exitCode: 0, startedAt: new Date(0), finishedAt: new Date(0), report: { value: report, path: 'r.json' } };

describe('a staging bypass in every sink', () => {
  it('one line per item version with its sites; the Markdown escapes the service’s name; Slack lists it as no wait; the webhook keeps its code', () => {
    const line = `staging bypassed (night): ${NAME} 2.5.4 went to live unstaged on 2 sites: 2.5.3 soaked on staging is flagged vulnerable (rollout.security_bypass)`;
    expect(bypassLines(report.results)).toEqual([line]);
    const markdown = markdownSummary(report, 'r.json');
    expect(markdown).toContain('evil\\_\\*\\[x\\]\\(https://a.example\\)\\|');
    expect(markdown).not.toContain(NAME);
    expect(JSON.stringify(slackMessage(end, new Date(0)))).not.toContain('staging_bypassed');
    expect(jsonSummary(end, new Date(0)).staging).toEqual([
      {
        task: 'night',
        code: 'staging_bypassed',
        plugin: NAME,
        version: '2.5.4',
        until: null,
        override: 'rollout.security_bypass: false stages it first',
        sites: 2,
      },
    ]);
  });
});
