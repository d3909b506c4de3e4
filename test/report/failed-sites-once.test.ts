import { describe, expect, it } from 'vitest';
import { markdownSummary } from '../../src/report/ci-formats.js';
import type { ReportResult } from '../../src/report/report.js';
import { slackMessage } from '../../src/notify/slack.js';
import { renderSummary } from '../../src/cli/render.js';
import { nightReport, runEndOf } from '../helpers/sinks.js';

/**
 * Three plugin writes to one shop that one restore took back are one site that broke: the Markdown
 * summary and Slack say it once, with what became of the other two, as the terminal does.
 */
let n = 0;
function write(site: string, extra: Partial<ReportResult>): ReportResult {
  n++;
  return {
    step_id: `s${n}`,
    task: 'plugins',
    action: 'plugins.update',
    target: { site, environment: 'live', env_id: `env-${site}` },
    request: { method: 'PUT', path: `/sites/environments/env-${site}/plugins` },
    status: 'failed',
    http_status: 202,
    operation_id: `op-${n}`,
    attempts: 1,
    error: null,
    reason: 'undone: the environment was put back from backup 7',
    ...extra,
  };
}

const report = nightReport([
  write('shop', { reason: 'health: HTTP 500 at https://shop.example/', restored: { backup_id: 7, operation_id: 'op-r', status: 'succeeded' } }),
  write('shop', {}),
  write('shop', {}),
  write('blog', { reason: 'health: HTTP 503 at https://blog.example/' }),
]);

/** The lines naming a site's failure, Markdown's escapes taken off. */
const lines = (text: string, site: string) =>
  text
    .replace(/\\(.)/g, '$1')
    .split('\n')
    .filter((line) => line.includes(`${site}/live`) && line.includes('failed'));

describe('each failed site once, in the summaries a person reads', () => {
  it('Markdown: the shop once, with the two writes its restore took back', () => {
    const md = markdownSummary(report, '/tmp/r.json');
    expect(md).toContain('**4 failed, held or unknown:**');
    expect(lines(md, 'shop')).toHaveLength(1);
    expect(lines(md, 'shop')[0]).toContain(
      'health: HTTP 500 at https://shop.example/ (and 2 more steps on this site: undone: the environment was put back from backup 7)',
    );
    expect(lines(md, 'blog')).toHaveLength(1);
  });

  it('Slack: the same', () => {
    const text = JSON.stringify(slackMessage(runEndOf(report, '/tmp/r.json'), new Date()).blocks);
    expect(text.match(/failed shop\/live/g)).toHaveLength(1);
    expect(text).toContain('(and 2 more steps on this site: undone: the environment was put back from backup 7)');
    expect(text.match(/failed blog\/live/g)).toHaveLength(1);
  });

  it('a long reason gives way, never the note on the other steps (Markdown, Slack, the terminal)', () => {
    const fatal = `health: HTTP 500 at https://shop.example/: PHP Fatal error: ${'Uncaught Error: Call to undefined function wc_get_product() '.repeat(6)}`;
    const long = nightReport([write('shop', { reason: fatal }), write('shop', {}), write('shop', {})]);
    const md = lines(markdownSummary(long, '/tmp/r.json'), 'shop');
    expect(md).toHaveLength(1);
    expect(md[0]).toContain('… (and 2 more steps on this site: undone: the environment was put back from backup 7)');
    expect(JSON.stringify(slackMessage(runEndOf(long, '/tmp/r.json'), new Date()).blocks)).toContain('(and 2 more steps on this site');
    expect(renderSummary(long, '/tmp/r.json')).toContain('… (and 2 more steps on this site: undone: the environment was put back from backup 7)');
  });
});
