import { describe, expect, it } from 'vitest';
import { renderSummary } from '../../src/cli/render.js';
import { KIND_TABLE } from '../../src/inventory/kinds.js';
import { jsonSummary, type RunEnd } from '../../src/notify/run-end.js';
import { slackMessage } from '../../src/notify/slack.js';
import { githubAnnotations, junitXml, markdownSummary } from '../../src/report/ci-formats.js';
import { recordPage } from '../../src/report/html/record-page.js';
import { runPage } from '../../src/report/html/run-page.js';
import type { Report, ReportResult } from '../../src/report/report.js';
import { newFatal } from '../../src/run/fatal-line.js';
import { breaksOf } from '../../src/run/write-ends.js';
import { nightReport } from '../helpers/sinks.js';
import { madeUp, secretParts, SECRET_NAMES, TOKEN_SHAPES, VALUE_SHAPES } from '../helpers/secret-shapes.js';

/**
 * A secret a site's fatal error line quotes, in every shape the mask knows, from the log's text to
 * every output that carries the logged line: the report's JSON, the terminal, Markdown, GitHub's
 * annotations, JUnit, the run's page, the monthly record, Slack, the JSON webhook, and the `why` the
 * quarantine keeps. None holds any part of it.
 */
const ROOT = '/www/shopfront_42/public';
const shop = { plugin: 'shop', from: '1.0.0', to: '1.1.0' };
const other = { plugin: 'forms', from: '2.0.0', to: '2.1.0' };

/** Each shape, with its secret: a value in each place a name or a call gives it, and each token shape. */
const CASES = [
  ...VALUE_SHAPES.map((shape, i) => {
    const value = shape.quoted ? `${madeUp(9, i)} ${madeUp(11, i + 100)}; ${madeUp(7, i + 200)}` : `${madeUp(12, i)}/${madeUp(8, i + 100)}`;
    return { label: shape.label, text: shape.line(SECRET_NAMES[i % SECRET_NAMES.length]!, value), secret: value };
  }),
  ...TOKEN_SHAPES.map((shape, i) => {
    const token = shape.token(1000 + i);
    return { label: shape.id, text: shape.text?.(token) ?? `key ${token} refused`, secret: token };
  }),
];

function result(n: number, text: string): ReportResult {
  const line = `[25-Nov-2026 02:14:07 UTC] PHP Fatal error:  Uncaught Exception: ${text} in ${ROOT}/wp-content/plugins/shop/shop.php:12`;
  const logged = newFatal('', line, Object.values(KIND_TABLE));
  expect(logged, text).toMatchObject({ plugin: 'shop' });
  return {
    step_id: `s${n}`,
    task: 'plugins',
    action: 'plugins.update',
    target: { site: `site-${n}`, environment: 'live', env_id: `e${n}` },
    request: { method: 'PUT', path: `/sites/environments/e${n}/plugins/bulk-update` },
    status: 'failed',
    http_status: 200,
    operation_id: `op-${n}`,
    attempts: 1,
    error: null,
    reason: 'isolated: shop 1.0.0 → 1.1.0 broke the site',
    restore_point: { tag: 'sitefleet-before-plugins', backup_id: 7 },
    restored: { backup_id: 7, operation_id: 'op-r', status: 'succeeded', health: { outcome: 'healthy' } },
    logged,
    isolation: {
      updates: [shop, other],
      suspect: { plugin: 'shop' },
      rounds: [
        { names: ['shop'], status: 'broken', logged },
        { names: ['forms'], status: 'healthy' },
      ],
      outcome: 'found',
      culprits: [shop],
      restores: 2,
    },
  };
}

/** A night of one write whose line quotes the secret. */
function reportOf(r: ReportResult): Report {
  return nightReport([r], { started_at: '2026-11-25T02:00:00.000Z', finished_at: '2026-11-25T02:40:00.000Z' });
}

const PATH = '/var/log/sitefleet/night.json';
const sent = new Date('2026-11-25T02:40:01Z');

/** Every output of the night, by name. */
function outputs(report: Report): Record<string, string> {
  const end: RunEnd = {
    name: report.name,
    company: report.company,
    runId: report.run_id,
    exitCode: 1,
    startedAt: new Date(report.started_at),
    finishedAt: new Date(report.finished_at),
    report: { value: report, path: PATH },
  };
  const r = report.results[0]!;
  return {
    'report JSON': JSON.stringify(report),
    terminal: renderSummary(report, PATH),
    Markdown: markdownSummary(report, PATH),
    'GitHub annotations': githubAnnotations(report).join('\n'),
    JUnit: junitXml(report),
    'run page': runPage({ report, reportPath: PATH, times: { missing: 'no journal in this test' } }),
    'monthly record': recordPage({ reports: [report] }),
    Slack: JSON.stringify(slackMessage(end, sent)),
    'JSON webhook': JSON.stringify(jsonSummary(end, sent)),
    'quarantine why': breaksOf({ action: r.action, target: r.target, alone: true, result: r }, Date.parse(report.finished_at))
      .map((b) => b.why)
      .join('\n'),
  };
}

describe('a secret in a logged line reaches no output', () => {
  it.each(CASES.map((c, i) => [c.label, c, i] as const))('%s: each output carries the masked line, and no part of the secret', (_label, c, i) => {
    const all = outputs(reportOf(result(i, c.text)));
    const parts = secretParts(c.secret, c.text.replace(c.secret, ''));
    expect(parts.length).toBeGreaterThan(0);
    for (const [output, text] of Object.entries(all)) {
      // The output does carry the logged line (or this test would prove nothing): its mask is there.
      expect(text, output).toMatch(/masked/);
      for (const part of parts) expect(text, `${output}: ${part}`).not.toContain(part);
    }
    expect(all['quarantine why']).toMatch(
      /^\[25-Nov-2026 02:14:07 UTC\] PHP Fatal error: {2}Uncaught Exception: .*\[masked\].* in \/www\/.*\/wp-content\/plugins\/shop\/shop\.php:12$/,
    );
  });
});
