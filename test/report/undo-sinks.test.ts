import { describe, expect, it } from 'vitest';
import { renderSummary } from '../../src/cli/render.js';
import { jsonSummary } from '../../src/notify/run-end.js';
import { markdownSummary } from '../../src/report/ci-formats.js';
import { runPage } from '../../src/report/html/run-page.js';
import type { ReportResult } from '../../src/report/report.js';
import type { UndoneByItems } from '../../src/run/types.js';
import { nightReport } from '../helpers/sinks.js';

const PUT_BACK = "put back jetpack 3.0.0 (files only; the site's data kept): healthy again";
const LOST = 'restored from backup 7: healthy again (what changed on the site since the backup of 2026-11-25 02:14 UTC is lost)';

const command = { kind: 'plugin' as const, name: 'jetpack', version: '3.0.0', wp_command: 'wp plugin install jetpack --version=3.0.0 --force' };
const byItems: UndoneByItems = { status: 'succeeded', commands: [{ ...command, status: 'succeeded', operation_id: 'op-u' }], health: { outcome: 'healthy' } };

function result(extra: Partial<ReportResult>): ReportResult {
  return {
    step_id: 's1',
    task: 'plugins',
    action: 'plugins.update',
    target: { site: 'shop', environment: 'live', env_id: 'e1' },
    request: { method: 'PUT', path: '/sites/environments/e1/plugins/bulk-update' },
    status: 'failed',
    http_status: 200,
    operation_id: 'op-1',
    attempts: 1,
    error: null,
    reason: 'health: HTTP 500',
    restore_point: { tag: 'sitefleet-before-plugins-2026-11-25', backup_id: 7, taken_at: '2026-11-25T02:14:09.000Z' },
    ...extra,
  };
}

const report = (r: ReportResult) => nightReport([r], { started_at: '2026-11-25T02:00:00.000Z', finished_at: '2026-11-25T02:40:00.000Z' });

describe('which way a broken site was put back, in every sink', () => {
  it('by its items: the terminal, Markdown, the HTML page and the webhook say the data was kept; no restore', () => {
    const r = report(result({ undone: byItems }));
    expect(renderSummary(r, '/tmp/r.json')).toContain(PUT_BACK);
    expect(markdownSummary(r, '/tmp/r.json')).toMatch(/put back jetpack 3\.0\.0 \\?\(files only; the site.{1,6}s data kept\\?\)/);
    expect(runPage({ report: r, reportPath: '/tmp/r.json', times: { missing: 'no journal in this test' } })).toContain('put back jetpack 3.0.0 (files only;');
    const end = {
      name: r.name,
      company: r.company,
      runId: r.run_id,
      exitCode: 1,
      startedAt: new Date(),
      finishedAt: new Date(),
      report: { value: r, path: '/tmp/r.json' },
    };
    const problem = (jsonSummary(end, new Date()).problems as Record<string, unknown>[])[0]!;
    expect(problem).toMatchObject({ undone: byItems, restored: null, what_became_of_the_site: PUT_BACK });
  });

  it('by the backup: the loss said, with the backup’s time; after items that did not mend it, both', () => {
    const restored = { backup_id: 7, operation_id: 'op-r', status: 'succeeded' as const, health: { outcome: 'healthy' as const } };
    expect(renderSummary(report(result({ restored })), '/tmp/r.json')).toContain(LOST);
    const still = { ...byItems, health: { outcome: 'unhealthy' as const, detail: 'HTTP 500' } };
    expect(renderSummary(report(result({ undone: still, restored })), '/tmp/r.json')).toContain(
      `put back jetpack 3.0.0 (files only; the site's data kept), but still broken: HTTP 500; ${LOST}`,
    );
  });
});
