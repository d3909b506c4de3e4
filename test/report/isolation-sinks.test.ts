import { describe, expect, it } from 'vitest';
import { renderSummary } from '../../src/cli/render.js';
import { jsonSummary, type RunEnd } from '../../src/notify/run-end.js';
import { slackMessage } from '../../src/notify/slack.js';
import { githubAnnotations, junitXml, markdownSummary, nextCommand } from '../../src/report/ci-formats.js';
import { recordPage } from '../../src/report/html/record-page.js';
import { runPage } from '../../src/report/html/run-page.js';
import { isolationFacts, isolationLine, logExcerpt } from '../../src/report/isolation-lines.js';
import type { Report, ReportResult } from '../../src/report/report.js';
import { nightReport, runEndOf } from '../helpers/sinks.js';
import type { Isolation, LoggedError } from '../../src/run/types.js';

/**
 * What `health.on_broken: isolate` did reaches every output: the update that broke the site, what
 * was kept, what is left, the restores, and the error log's line, which is the service's text (a
 * plugin's own words, even) and stays data in every sink.
 */
const PATH = '/var/log/sitefleet/night.json';
const ROOT = '/www/shopfront_42/public';
const LINE = `[25-Nov-2026 02:14:07 UTC] PHP Fatal error:  Uncaught Error: Call to undefined function akismet_init() in ${ROOT}/wp-content/plugins/akismet/akismet.php:123`;
/** A line a hostile plugin could make PHP log: markup, a mention, Markdown, a terminal escape, a bell, a bidi override. */
const HOSTILE = `PHP Fatal error:  Uncaught Exception: <script>alert(1)</script> <!channel> [x](http://evil.example) **bold** \u001b]0;pwned\u0007\u001b[2J \u202e in ${ROOT}/wp-content/plugins/akismet/a.php:1`;

const akismet = { plugin: 'akismet', from: '5.3', to: '5.4' };
const others = Array.from({ length: 11 }, (_, i) => ({ plugin: `other-${i}`, from: '1.0', to: '1.1' }));

function iso(over: Partial<Isolation>): Isolation {
  return { updates: [akismet, ...others], rounds: [], outcome: 'found', culprits: [], restores: 1, ...over };
}

const FOUND = iso({
  suspect: { plugin: 'akismet' },
  rounds: [
    { names: ['akismet'], status: 'broken', logged: { plugin: 'akismet', line: LINE } },
    { names: others.map((o) => o.plugin), status: 'healthy' },
  ],
  culprits: [akismet],
  restores: 3,
});

let n = 0;
function result(extra: Partial<ReportResult>): ReportResult {
  n++;
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
    reason: 'health check failed: HTTP 500',
    restore_point: { tag: 'sitefleet-before-plugins-2026-11-25', backup_id: 7 },
    restored: { backup_id: 7, operation_id: 'op-r', status: 'succeeded', health: { outcome: 'healthy' } },
    ...extra,
  };
}

function report(results: ReportResult[]): Report {
  return nightReport(results, { started_at: '2026-11-25T02:00:00.000Z', finished_at: '2026-11-25T02:40:00.000Z' });
}

const end = (r: Report): RunEnd => runEndOf(r, PATH);

describe('isolationLine: the words', () => {
  it('found: the culprit with its versions and the log line, the version kept, the other updates kept, the restores', () => {
    expect(isolationLine({ isolation: FOUND, logged: { plugin: 'other-0', line: 'PHP Fatal error: x in /a/wp-content/plugins/other-0/o.php' } })).toBe(
      'isolated akismet 5.3 → 5.4 as the update that broke the site (PHP Fatal error:  Uncaught Error: Call to undefined function akismet_init() in …/wp-content/plugins/akismet/akismet.php:123): akismet stays on 5.3; 11 other updates kept; 3 restores',
    );
  });

  it('not reproduced, stopped and isolating: what is installed, what is left, and the command that continues', () => {
    expect(isolationLine({ isolation: iso({ outcome: 'not reproduced', rounds: [{ names: ['akismet'], status: 'healthy' }], restores: 1 }) })).toBe(
      'not reproduced: the 12 updates were sent again in 1 round and none broke the site; 12 updates kept (all installed); 1 restore',
    );
    const stopped = iso({ outcome: 'stopped', reason: 'the window closed', left: [akismet, others[0]!], restores: 2 });
    expect(isolationLine({ isolation: stopped })).toBe(
      'isolation stopped (the window closed): 10 updates kept; not installed: akismet 5.3 → 5.4, other-0 1.0 → 1.1; 2 restores',
    );
    const going = iso({ outcome: 'isolating', rounds: [{ names: others.slice(0, 6).map((o) => o.plugin), status: 'healthy' }], restores: 1 });
    expect(isolationFacts(going).left).toEqual([akismet, ...others.slice(6)]);
    expect(isolationLine({ isolation: going }, `sitefleet resume ${PATH}`)).toBe(
      `isolating, 1 round so far: 6 updates kept; left: akismet 5.3 → 5.4, other-6 1.0 → 1.1, other-7 1.0 → 1.1, other-8 1.0 → 1.1, other-9 1.0 → 1.1 and 1 more; 1 restore; continue with: sitefleet resume ${PATH}`,
    );
    // A write that broke its site without isolation: the log line alone.
    expect(isolationLine({ logged: { theme: 'astra', line: LINE } })).toMatch(/^the error log named theme astra \(PHP Fatal error: {2}Uncaught/);
    expect(isolationLine({})).toBeUndefined();
    expect(logExcerpt(LINE)).toBe(
      'PHP Fatal error:  Uncaught Error: Call to undefined function akismet_init() in …/wp-content/plugins/akismet/akismet.php:123',
    );
  });

  it('a by-items round restored to the point before the write: nothing counted in, while that restore is followed too; a culprit whose way back failed may stay', () => {
    const restored = (status: 'accepted' | 'failed') => ({ backup_id: 1, operation_id: 'op', status });
    const undone = { status: 'failed' as const, commands: [] };
    const rounds = [
      { names: others.slice(0, 6).map((o) => o.plugin), status: 'healthy' as const, by_items: true as const },
      { names: ['akismet'], status: 'broken' as const, by_items: true as const, undone, restored: restored('accepted') },
    ];
    // A halt while the restore is followed: the six that went in healthy are being undone by it.
    const going = isolationFacts(iso({ outcome: 'isolating', culprits: [akismet], rounds }));
    expect(going.kept).toEqual([]);
    expect(going.left).toEqual(others);
    // Its files and its restore both failed: the culprit is not said to be back on its old version.
    const failed = iso({
      outcome: 'stopped',
      culprits: [akismet],
      left: others.slice(6),
      rounds: [rounds[0]!, { ...rounds[1]!, restored: restored('failed') }],
    });
    expect(isolationLine({ isolation: failed })).toMatch(
      /found breaking it: akismet 5\.3 → 5\.4 \(the way back after it did not end: it may still be installed\)/,
    );
    expect(isolationLine({ isolation: FOUND })).not.toContain('may still be installed');
  });

  it('an isolation not done is continued by resume', () => {
    const going = report([result({ isolation: iso({ outcome: 'isolating', restores: 1 }) })]);
    expect(nextCommand(going, PATH)).toEqual({ kind: 'resume', argv: ['resume', PATH] });
    expect(nextCommand(report([result({ isolation: FOUND })]), PATH)).toBeUndefined();
  });
});

describe('every sink shows the isolation, and keeps a hostile log line as data', () => {
  const logged: LoggedError = { plugin: 'akismet', line: HOSTILE };
  const found = result({ isolation: { ...FOUND, rounds: [{ names: ['akismet'], status: 'broken', logged }, FOUND.rounds[1]!] }, logged });
  const stopped = result({ isolation: iso({ outcome: 'isolating', left: [akismet], restores: 2 }) });
  const r = report([found, stopped, result({ status: 'succeeded', restore_point: undefined, restored: undefined })]);
  const RAW = ['<script>', '<!channel>', '\u001b', '\u0007', '\u202e'];

  it('the terminal summary: a line per site, escaped', () => {
    const text = renderSummary(r, PATH);
    expect(text).toContain('isolated (2 sites):');
    expect(text).toContain(`  ${found.target.site}/live (plugins): isolated akismet 5.3 → 5.4 as the update that broke the site (PHP Fatal error:`);
    expect(text).toContain(
      '\\x1b]0;pwned\\x07\\x1b[2J \\u202e in …/wp-content/plugins/akismet/a.php:1): akismet stays on 5.3; 11 other updates kept; 3 restores',
    );
    expect(text).toContain(`isolating, 0 rounds so far: 11 updates kept; left: akismet 5.3 → 5.4; 2 restores; continue with: sitefleet resume ${PATH}`);
    for (const c of ['\u001b', '\u0007', '\u202e']) expect(text).not.toContain(c);
  });

  it('Markdown, GitHub annotations and JUnit: escaped for each', () => {
    const md = markdownSummary(r, PATH);
    expect(md).toContain('**Isolated: the update that broke the site, found by sending them again (2):**');
    expect(md).toContain('\\<script\\>alert\\(1\\)\\</script\\> \\<\\!channel\\> \\[x\\]\\(http://evil.example\\) \\*\\*bold\\*\\*');
    for (const raw of RAW) expect(md).not.toContain(raw);
    const annotations = githubAnnotations(r);
    expect(annotations[0]).toMatch(/^::error title=sitefleet night%3A plugins::failed site-\d+\/live: .*; isolated akismet 5\.3 → 5\.4 as the update/);
    for (const raw of ['\u001b', '\u0007', '\u202e', '\n']) expect(annotations.join('')).not.toContain(raw);
    const xml = junitXml(r);
    expect(xml).toContain('&lt;script&gt;alert(1)&lt;/script&gt; &lt;!channel&gt;');
    expect(xml).toContain('akismet stays on 5.3; 11 other updates kept; 3 restores');
    for (const raw of RAW) expect(xml).not.toContain(raw);
  });

  it('the run page: a row per site, in the HTML rule', () => {
    const html = runPage({ report: r, reportPath: PATH, times: { missing: 'no journal in this test' } });
    expect(html).toContain('<h2>Isolated updates (2)</h2>');
    expect(html).toContain(`<tr class="isolated" data-step="${found.step_id}" data-outcome="found">`);
    expect(html).toContain('&lt;script&gt;alert(1)&lt;/script&gt; &lt;!channel&gt;');
    expect(html).toContain('isolating, 0 rounds so far');
    for (const raw of RAW) expect(html).not.toContain(raw);
  });

  it('the monthly record: per site, the culprit, the version kept, the updates kept and those not installed', () => {
    const html = recordPage({ reports: [r] });
    const site = html.slice(html.indexOf(`data-site="${found.target.site}"`));
    expect(site).toContain('<h4>Isolated updates (1)</h4>');
    expect(site).toContain('Broke the site: akismet 5.3 → 5.4; it stays on 5.3.');
    expect(site).toContain(`Sent again and kept (11): ${others.map((o) => `${o.plugin} 1.0 → 1.1`).join(', ')}.`);
    expect(site).toContain('Restores: 3.');
    expect(site).toContain('<code>PHP Fatal error:  Uncaught Exception: &lt;script&gt;');
    const other = html.slice(html.indexOf(`data-site="${stopped.target.site}"`));
    expect(other).toContain('data-outcome="isolating"');
    expect(other).toContain('Not installed (1): akismet 5.3 → 5.4.');
    for (const raw of RAW) expect(html).not.toContain(raw);
  });

  it('the JSON webhook: the records exact (the receiver escapes for its own sink), and the words', () => {
    const body = jsonSummary(end(r), new Date('2026-11-25T02:40:01Z'));
    const isolated = body.isolated as Record<string, unknown>[];
    expect(isolated).toHaveLength(2);
    expect(isolated[0]).toMatchObject({
      target: `${found.target.site}/live`,
      outcome: 'found',
      culprits: [akismet],
      kept: others,
      left: [],
      restores: 3,
      logged: { plugin: 'akismet', line: HOSTILE },
    });
    expect(isolated[1]).toMatchObject({ outcome: 'isolating', left: [akismet], words: expect.stringContaining(`continue with: sitefleet resume ${PATH}`) });
  });

  it('Slack: a line per site; no mention, link, markup or control character gets through', () => {
    const message = slackMessage(end(r), new Date('2026-11-25T02:40:01Z'));
    const texts = (message.blocks as { text?: { text: string } }[]).map((b) => b.text?.text ?? '').join('\n');
    expect(texts).toContain(`• isolated ${found.target.site}/live (plugins): isolated akismet 5.3 → 5.4`);
    expect(texts).toContain('&lt;!channel&gt;');
    expect(texts).toContain('＊＊bold＊＊');
    for (const raw of [...RAW, '**bold**']) expect(texts).not.toContain(raw);
  });
});
