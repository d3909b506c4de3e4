import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { PAGE_CSP } from '../../src/report/html/document.js';
import { logoDataUrl } from '../../src/report/html/logo.js';
import { recordPage } from '../../src/report/html/record-page.js';
import { runPage } from '../../src/report/html/run-page.js';
import { runTimes } from '../../src/report/html/spans.js';
import { summarize, type Report, type ReportResult } from '../../src/report/report.js';
import type { JournalRecord } from '../../src/run/journal.js';
import type { StepStatus } from '../../src/run/types.js';
import { HOSTILE_NAMES } from '../../src/sim/hostile-names.js';
import { HTML_HEAD } from '../../src/util/output-file.js';
import { tempDir } from '../helpers/cli.js';

/** The elements the run page is built of. */
const OWN_TAGS = new Set(
  'html head meta title style body header div h1 h2 main footer p dl dt dd figure figcaption svg rect title table tr td th thead tbody span g text line circle path ul li code'.split(
    ' ',
  ),
);
const T0 = Date.parse('2026-11-22T02:00:00Z');
const RUN_ID = '11111111-2222-4333-8444-555555555555';

function result(i: number, status: StepStatus, extra: Partial<ReportResult> = {}): ReportResult {
  const site = HOSTILE_NAMES[i % HOSTILE_NAMES.length]!;
  return {
    step_id: `0:${i}`,
    task: 'Theme updates',
    action: 'themes.update',
    target: { env_id: `e${i}`, site, environment: 'live' },
    request: { method: 'PUT', path: `/sites/environments/e${i}/themes/bulk-update`, body: { themes: [{ name: 'astra' }] } },
    status,
    http_status: 202,
    operation_id: null,
    attempts: 1,
    error: null,
    reason: status === 'failed' ? `could not update ${site}` : null,
    precondition: 'astra 4.1.0 → 4.1.1',
    ...extra,
  };
}

function reportOf(results: ReportResult[]): Report {
  return {
    version: 1,
    run_id: RUN_ID,
    playbook: 'p.yaml',
    name: 'themes',
    company: '0f1e2d3c-4b5a-4697-8877-665544332211',
    mode: 'run',
    started_at: new Date(T0).toISOString(),
    finished_at: new Date(T0 + 3_600_000).toISOString(),
    stopped: null,
    summary: summarize(results),
    results,
  };
}

/** A journal whose steps each take `ms`, one after another `every` ms apart. */
function journalOf(results: ReportResult[], every: number, ms: number): JournalRecord[] {
  const records: JournalRecord[] = [
    { t: 'start', v: 1, run_id: RUN_ID, playbook: 'p.yaml', report: 'r.json', started_at: new Date(T0).toISOString(), plan: { settings: {} } as never },
  ];
  results.forEach((r, i) => {
    records.push({ t: 'intent', step: r.step_id!, attempt: 1, at: T0 + i * every });
    records.push({ t: 'result', step: r.step_id!, result: { ...r, step_id: r.step_id!, status: 'accepted' }, at: T0 + i * every + 5 });
    records.push({ t: 'update', step: r.step_id!, result: { ...r, step_id: r.step_id! }, at: T0 + i * every + ms });
  });
  return records;
}

describe('the run page as text', () => {
  it('begins with the head output-file.ts knows it by, its CSP allowing no script and nothing from anywhere', () => {
    const results = HOSTILE_NAMES.map((_, i) => result(i, i % 3 === 0 ? 'failed' : 'succeeded'));
    const page = runPage({ report: reportOf(results), reportPath: 'r.json', times: runTimes(journalOf(results, 1000, 4000)) });
    expect(page.slice(0, HTML_HEAD.length)).toBe(HTML_HEAD);
    expect(page).toContain(`content="${PAGE_CSP.replace(/'/g, '&#39;')}"`);
    expect(PAGE_CSP).toMatch(/^default-src 'none'; style-src 'unsafe-inline'; img-src data:/);
    // eslint-disable-next-line no-control-regex -- the control characters are what is looked for
    expect(page).not.toMatch(/[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u202a-\u202e]/);
    // Every tag is the page's own: no name opened one.
    const tags = new Set([...page.matchAll(/<\/?([a-zA-Z][\w-]*)/g)].map((m) => m[1]!.toLowerCase()));
    expect([...tags].filter((t) => !OWN_TAGS.has(t))).toEqual([]);
    expect(page.match(/<rect class="mark /g)).toHaveLength(results.length);
    expect(page.match(/<tr class="problem"/g)).toHaveLength(results.filter((r) => r.status === 'failed').length);
  });

  it('marks a restore where the journal recorded it, and a page without a journal says why it has no timeline', () => {
    const restored = result(0, 'failed', {
      restore_point: { tag: 'sitefleet-before', backup_id: 7 },
      restored: { backup_id: 7, operation_id: 'op', status: 'succeeded', health: { outcome: 'healthy' } },
      health: { url: 'https://x/', outcome: 'unhealthy' },
    });
    const records = journalOf([restored], 1000, 4000);
    records.push({ t: 'update', step: '0:0', result: { ...restored, step_id: '0:0' }, at: T0 + 9000 });
    const times = runTimes(records);
    expect(times.spans.get('0:0')).toEqual({ send: T0, end: T0 + 4000, open: false, restoredAt: T0 + 9000 });
    const page = runPage({ report: reportOf([restored]), reportPath: 'r.json', times });
    expect(page).toContain('class="restore"');
    expect(page).toContain('class="health health-unhealthy"');
    expect(page).toContain('restored from backup 7: healthy again');
    const none = runPage({ report: reportOf([restored]), reportPath: 'r.json', times: { missing: 'no journal beside the report' } });
    expect(none).toContain('No timeline: no journal beside the report.');
    expect(none).not.toContain('<svg class="timeline"');
  });

  it('draws a band of marks thinner than a pixel as steps in flight', () => {
    const results = Array.from({ length: 3000 }, (_, i) => result(i, i % 50 === 0 ? 'failed' : 'succeeded'));
    const page = runPage({ report: reportOf(results), reportPath: 'r.json', times: runTimes(journalOf(results, 1000, 800)) });
    expect(page).not.toContain('<rect class="mark ');
    expect(page).toContain('class="aggregate" data-steps="3000"');
  });
});

/** A step with a release-age decision and a staging decision about `ref` (a theme's or a plugin's). */
function decided(i: number, ref: { theme: string } | { plugin: string }): ReportResult {
  const release = {
    code: 'age_pending' as const,
    held: true,
    installed: '1.0.0',
    version: '1.1.0',
    first_seen: '2026-11-21',
    eligible_at: '2026-11-24',
    override: 'min_release_age',
  };
  return result(i, 'skipped', {
    release_age: [{ ...ref, ...release }],
    staging: [{ ...ref, code: 'staging_soaking', version: '1.1.0', since: '2026-11-21', until: '2026-11-23' }],
  });
}

/** The header cells of the run page's table of class `name`. */
function headers(page: string, name: string): string[] {
  const table = page.slice(page.indexOf(`<table class="${name}">`));
  return [...table.slice(0, table.indexOf('</thead>')).matchAll(/<th>([^<]*)<\/th>/g)].map((m) => m[1]!);
}

describe('the run page names the kind of the items it lists', () => {
  it('theme for a theme run (as before plugins came), plugin for a plugin run, both for a playbook that mixed them', () => {
    const page = (results: ReportResult[]) => runPage({ report: reportOf(results), reportPath: 'r.json', times: { missing: 'none' } });
    const themes = page([decided(0, { theme: 'astra' })]);
    expect(headers(themes, 'release-age')).toEqual(['code', 'task', 'theme', 'environments', 'first seen', 'eligible', 'override']);
    expect(headers(themes, 'staging')).toEqual(['code', 'site', 'environment', 'task', 'theme', 'on staging since', 'until / failed at', 'why or override']);
    const plugins = page([decided(0, { plugin: 'akismet' })]);
    expect(headers(plugins, 'release-age')[2]).toBe('plugin');
    expect(headers(plugins, 'staging')[4]).toBe('plugin');
    expect(plugins).toContain('akismet 1.0.0 → 1.1.0');
    const both = page([decided(0, { theme: 'astra' }), decided(1, { plugin: 'akismet' })]);
    expect(headers(both, 'release-age')[2]).toBe('theme or plugin');
    expect(headers(both, 'staging')[4]).toBe('theme or plugin');
  });

  it('the maintenance record lists plugin updates under their own heading', () => {
    const plugin = result(1, 'succeeded', {
      task: 'Plugin updates',
      action: 'plugins.update',
      request: { method: 'PUT', path: '/sites/environments/e1/plugins/bulk-update', body: { plugins: [{ name: 'akismet' }] } },
      precondition: 'akismet 5.0 → 5.1',
    });
    const page = recordPage({ reports: [reportOf([result(0, 'succeeded'), plugin])] });
    expect(page).toContain('<h4>Theme updates</h4>');
    expect(page).toContain('<h4>Plugin updates</h4>');
    expect(page).toContain('akismet 5.0 → 5.1');
  });
});

describe('the maintenance record as text', () => {
  it('a section per matching site: theme versions from → to, incidents with what was done', () => {
    const results = [result(0, 'succeeded'), result(1, 'failed'), result(2, 'succeeded', { target: { site: 'acme-1', environment: 'live' } })];
    const page = recordPage({ reports: [reportOf(results)], sites: ['acme-*'] });
    expect(page.match(/<section class="site"/g)).toHaveLength(1);
    expect(page).toContain('astra 4.1.0 → 4.1.1');
    const all = recordPage({ reports: [reportOf(results)] });
    expect(all.match(/<section class="site"/g)).toHaveLength(3);
    expect(all).toContain('What was done: not restored.');
    expect(all).not.toMatch(/<script|<img/i);
  });

  it('a command’s output keeps its lines and tabs in its block; a run named twice is listed once', () => {
    const cli = result(0, 'succeeded', {
      action: 'wp_cli.run',
      task: 'plugins',
      request: { method: 'POST', path: '/x', body: { wp_command: 'wp plugin list' } },
      output: 'name\tstatus\nakismet\tactive<b>',
    });
    const report = reportOf([cli]);
    const page = recordPage({ reports: [report, { ...report, finished_at: new Date(T0 + 7_200_000).toISOString() }] });
    expect(page).toContain('<pre>name\tstatus\nakismet\tactive&lt;b&gt;</pre>');
    expect(page.match(/<li class="work">/g)).toHaveLength(1);
  });
});

describe('--logo', () => {
  const dir = tempDir();
  const file = (name: string, content: string | Buffer) => {
    writeFileSync(join(dir, name), content);
    return join(dir, name);
  };

  it('embeds a PNG, a JPEG and a plain SVG as data: URLs', () => {
    expect(logoDataUrl(file('a.png', Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0])))).toMatch(/^data:image\/png;base64,/);
    expect(logoDataUrl(file('a.jpg', Buffer.from([0xff, 0xd8, 0xff, 0xe0])))).toMatch(/^data:image\/jpeg;base64,/);
    expect(logoDataUrl(file('a.svg', '<svg xmlns="http://www.w3.org/2000/svg"><circle r="4" fill="url(#g)"/></svg>'))).toMatch(/^data:image\/svg\+xml;base64,/);
    // Links inside the file, quoted as editors write them, are a logo's own: gradients, reused shapes.
    const inside = `<svg xmlns="http://www.w3.org/2000/svg"><use href="#a"/><use xlink:href='#a'/><rect style="fill:url('#g')"/></svg>`;
    expect(logoDataUrl(file('b.svg', inside))).toMatch(/^data:image\/svg\+xml;base64,/);
  });

  it.each([
    ['<svg><script>alert(1)</script></svg>', /<script>/],
    ['<svg onload="alert(1)"></svg>', /event handler/],
    ['<svg><image href="http://evil.example/x.png"/></svg>', /embeds other content/],
    ['<svg><a href="https://evil.example">x</a></svg>', /link to something outside/],
    ['<svg><rect style="fill:url(http://evil.example/x)"/></svg>', /url\(\)/],
    ['<!DOCTYPE svg [<!ENTITY x "y">]><svg/>', /not a PNG, JPEG or SVG|DOCTYPE/],
    ['<!DOCTYPE svg PUBLIC "-//W3C//DTD SVG 1.1//EN" "http://www.w3.org/Graphics/SVG/1.1/DTD/svg11.dtd"><svg/>', /DOCTYPE or entity declaration/],
    ['GIF89a', /not a PNG, JPEG or SVG/],
  ])('refuses %s (exit 2)', (content, why) => {
    expect(() => logoDataUrl(file('bad.svg', content))).toThrow(why);
    try {
      logoDataUrl(file('bad.svg', content));
    } catch (error) {
      expect((error as { exitCode: number }).exitCode).toBe(2);
    }
  });
});
