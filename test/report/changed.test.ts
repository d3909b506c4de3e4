import { describe, expect, it } from 'vitest';
import { renderSummary } from '../../src/cli/render.js';
import { slackMessage } from '../../src/notify/slack.js';
import { jsonSummary, type RunEnd } from '../../src/notify/run-end.js';
import { changedGroups, changedLine } from '../../src/report/changed.js';
import { markdownSummary } from '../../src/report/ci-formats.js';
import { recordPage } from '../../src/report/html/record-page.js';
import { runPage } from '../../src/report/html/run-page.js';
import type { Report, ReportResult } from '../../src/report/report.js';
import { expectSafeTerminal, nightReport, runEndOf } from '../helpers/sinks.js';

/**
 * Issue 56, part 3: every summary says what the night updated, grouped by item and versions, and
 * counts only the updates that stand: never one the night took back (a restore, a put-back by the
 * items' files, isolation's culprit, a quarantined version, a write read back not_updated).
 */
const PATH = '/var/log/sitefleet/night.json';

let n = 0;
function write(site: string, extra: Partial<ReportResult> = {}, env = 'live'): ReportResult {
  n++;
  return {
    step_id: `s${n}`,
    task: 'plugins',
    action: 'plugins.update',
    target: { site, environment: env, env_id: `e-${site}-${env}` },
    request: { method: 'PUT', path: `/sites/environments/e${n}/plugins/bulk-update`, body: { plugins: [{ name: 'jetpack' }, { name: 'akismet' }] } },
    status: 'succeeded',
    http_status: 202,
    operation_id: `op-${n}`,
    attempts: 1,
    error: null,
    reason: null,
    precondition: 'jetpack 3.0.0 → 3.0.4, akismet 5.3 → 5.4',
    ...extra,
  };
}

const restorePoint = { tag: 'sitefleet-before-plugins', backup_id: 7 };

/** A night of every way an update can end: three that stand, and each way one is taken back. */
function night(): Report {
  const results: ReportResult[] = [
    write('blue-001'),
    write('blue-002'),
    write('blue-003', {}, 'staging'),
    write('blue-003'),
    // Restored from its backup: nothing of it stands.
    write('red-001', {
      status: 'failed',
      reason: 'health check failed: HTTP 500',
      restore_point: restorePoint,
      restored: { backup_id: 7, operation_id: 'op-r', status: 'succeeded', health: { outcome: 'healthy' } },
    }),
    // Put back by the items' own files.
    write('red-002', {
      status: 'failed',
      reason: 'health check failed: HTTP 500',
      undone: { status: 'succeeded', commands: [{ plugin: 'jetpack', name: 'jetpack', version: '3.0.0' } as never], health: { outcome: 'healthy' } },
    }),
    // Read back on the old versions: the service ran it, the site did not move.
    write('red-003', { status: 'failed', reason: 'not updated', failure: { code: 'not_updated', stays: [{ name: 'jetpack', version: '3.0.0' }] } }),
    // Isolated: akismet broke the site and stays on 5.3; jetpack went in again and was kept.
    write('green-001', {
      status: 'failed',
      reason: 'isolated',
      restore_point: restorePoint,
      restored: { backup_id: 7, operation_id: 'op-r2', status: 'succeeded' },
      isolation: {
        updates: [
          { plugin: 'jetpack', from: '3.0.0', to: '3.0.4' },
          { plugin: 'akismet', from: '5.3', to: '5.4' },
        ],
        rounds: [
          { names: ['akismet'], status: 'broken' },
          { names: ['jetpack'], status: 'healthy' },
        ],
        outcome: 'found',
        culprits: [{ plugin: 'akismet', from: '5.3', to: '5.4' }],
        restores: 2,
      },
    }),
    // A pinned write of the culprit in the same environment, seen healthy before isolation found it: not said to stand.
    write('green-001', {
      request: { method: 'PUT', path: '/sites/environments/x/plugins', body: { name: 'akismet', update_version: '5.4' } },
      precondition: 'akismet 5.3 → 5.4',
    }),
    // A version the run quarantined on this environment.
    write('green-002', {
      request: { method: 'PUT', path: '/sites/environments/x/plugins', body: { name: 'updraftplus', update_version: '9.3.4' } },
      precondition: 'updraftplus 9.2.2 → 9.3.4',
    }),
    // A restore point's step and a write not seen to finish.
    write('blue-001', { role: 'backup', request: { method: 'POST', path: '/backups' }, precondition: undefined }),
    write('blue-004', { status: 'accepted' }),
  ];
  return nightReport(results, {
    quarantined: [
      {
        kind: 'plugin',
        name: 'updraftplus',
        version: '9.3.4',
        why: 'PHP Fatal error',
        at: '2026-11-20T02:05:00.000Z',
        env_id: 'e-green-002-live',
        site: 'green-002',
        environment: 'live',
      },
    ] as Report['quarantined'],
  });
}

const end = (r: Report): RunEnd => runEndOf(r, PATH);

describe('what changed: the groups', () => {
  it('counts only the updates that stand, once per item and versions, with where they stand', () => {
    const groups = changedGroups(night());
    expect(groups.map((g) => [changedLine(g), g.where])).toEqual([
      ['jetpack 3.0.0 → 3.0.4 on 4 sites, 5 environments', ['blue-001/live', 'blue-002/live', 'blue-003/live', 'blue-003/staging', 'green-001/live']],
      ['akismet 5.3 → 5.4 on 3 sites, 4 environments', ['blue-001/live', 'blue-002/live', 'blue-003/live', 'blue-003/staging']],
    ]);
  });

  it('the version read back is the one named: a bulk update installs the newest there is', () => {
    const report = nightReport([
      write('a-1', {
        runs: [
          { name: 'jetpack', version: '3.0.5' },
          { name: 'akismet', version: '5.4' },
        ],
      }),
    ]);
    expect(changedGroups(report).map(changedLine)).toEqual(['akismet 5.3 → 5.4 on 1 site', 'jetpack 3.0.0 → 3.0.5 on 1 site']);
  });
});

describe('what changed, in every summary', () => {
  it('the terminal summary says what was updated, not only what was left alone', () => {
    const text = renderSummary(night(), PATH);
    expect(text).toContain('updated: jetpack 3.0.0 → 3.0.4 on 4 sites, 5 environments');
    expect(text).toContain('updated: akismet 5.3 → 5.4 on 3 sites, 4 environments');
    expect(text).not.toContain('updraftplus 9.2.2 → 9.3.4 on');
  });

  it('the Markdown summary lists the updates', () => {
    const md = markdownSummary(night(), PATH);
    expect(md).toContain('**Updated:**');
    expect(md).toContain('- jetpack 3.0.0 → 3.0.4 on 4 sites, 5 environments');
  });

  it('Slack lists the updates', () => {
    const text = JSON.stringify(slackMessage(end(night()), new Date('2026-11-20T03:00:00Z')).blocks);
    expect(text).toContain('• updated: jetpack 3.0.0 → 3.0.4 on 4 sites, 5 environments');
  });

  it('the JSON webhook carries the groups as data', () => {
    const body = jsonSummary(end(night()), new Date('2026-11-20T03:00:00Z'));
    expect(body.changed).toEqual(changedGroups(night()));
    expect((body.changed as { name: string; sites: number }[]).map((g) => [g.name, g.sites])).toEqual([
      ['jetpack', 4],
      ['akismet', 3],
    ]);
  });

  it('the run page lists each update with the sites where it stands', () => {
    const page = runPage({ report: night(), reportPath: PATH, times: { missing: 'no journal' } });
    const rows = [...page.matchAll(/<tr class="changed"[^>]*data-name="([^"]*)"[^>]*>[\s\S]*?<td class="where">([^<]*)<\/td>/g)].map((m) => [m[1], m[2]]);
    expect(rows).toEqual([
      ['jetpack', 'blue-001/live, blue-002/live, blue-003/live, blue-003/staging, green-001/live'],
      ['akismet', 'blue-001/live, blue-002/live, blue-003/live, blue-003/staging'],
    ]);
  });

  it('names the service gave reach each sink through its own safe-text rule', () => {
    const name = '<img src=x onerror=alert(1)> <!channel> **b** \u001b[2J';
    const report = nightReport([write('a-1', { request: { method: 'PUT', path: '/x', body: { name, update_version: '2.0' } }, precondition: undefined })]);
    expect(changedGroups(report).map(changedLine)).toEqual([`${name} → 2.0 on 1 site`]);
    expectSafeTerminal(renderSummary(report, PATH), 'terminal');
    const page = runPage({ report, reportPath: PATH, times: { missing: 'x' } });
    expect(page).toContain('&lt;img src=x onerror=alert(1)&gt;');
    expect(page).not.toContain('<img src=x');
    expect(markdownSummary(report, PATH)).toContain('\\<img src=x onerror=alert\\(1\\)\\>');
    const slack = JSON.stringify(slackMessage(end(report), new Date()).blocks);
    expect(slack).toContain('updated: &lt;img');
    expect(slack).not.toContain('<!channel>');
  });
});

describe('the monthly record never lists an update the night took back', () => {
  it('a culprit isolation found, a quarantined version, a restored or undone write are not under the updates', () => {
    const page = recordPage({ reports: [night()] });
    const section = (site: string) => page.slice(page.indexOf(`data-site="${site}"`), page.indexOf('</section>', page.indexOf(`data-site="${site}"`)));
    const green = section('green-001');
    const work = green.slice(0, green.indexOf('Isolated updates'));
    expect(work).toContain('jetpack 3.0.0 → 3.0.4');
    expect(work).not.toContain('akismet');
    expect(green).toContain('it stays on 5.3');
    expect(section('green-002')).not.toContain('updraftplus 9.2.2 → 9.3.4');
    for (const site of ['red-001', 'red-002', 'red-003']) expect(section(site)).toContain('No work done.');
  });
});
