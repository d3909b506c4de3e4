import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { recordPage } from '../../src/report/html/record-page.js';
import { runPage } from '../../src/report/html/run-page.js';
import type { ReportResult } from '../../src/report/report.js';
import { useBrowser } from '../helpers/browser.js';
import { tempDir } from '../helpers/cli.js';
import { nightReport } from '../helpers/sinks.js';

/**
 * Issue 56, part 5: the pages' text wraps between words, in Debian's chromium. A word splits across
 * lines only when it is longer than its line (a log path); a site's name, a task's name and a sentence's
 * words never do (they did: "blue-/002", "Plugin updat/es", when every column could shrink to a letter).
 */
const browser = useBrowser();

/**
 * Run in the page: every word (a run of letters and digits) of the page's cells, list items and facts
 * (commands and log lines in `code` and `pre` aside) that lies on more than one line although it fits
 * its element's width; and every site's or environment's name (`td.name`) not on one line. A long
 * token may still break where it has a hyphen or a slash: a line break's own places.
 */
const SPLIT_WORDS = `(() => {
  const split = [];
  for (const el of document.querySelectorAll('td, th, li, dd, h4')) {
    const style = getComputedStyle(el);
    const room = el.clientWidth - parseFloat(style.paddingLeft) - parseFloat(style.paddingRight);
    const walker = document.createTreeWalker(el, NodeFilter.SHOW_TEXT);
    for (let node = walker.nextNode(); node; node = walker.nextNode()) {
      if (node.parentElement.closest('code, pre') || node.parentElement.closest('td, th, li, dd, h4') !== el) continue;
      for (const m of node.data.matchAll(/[\\p{L}\\p{N}_]+/gu)) {
        const range = document.createRange();
        range.setStart(node, m.index);
        range.setEnd(node, m.index + m[0].length);
        const lines = new Set(Array.from(range.getClientRects(), (r) => Math.round(r.top)));
        if (lines.size < 2) continue;
        const probe = document.createElement('span');
        probe.style.whiteSpace = 'nowrap';
        probe.textContent = m[0];
        node.parentElement.appendChild(probe);
        const width = probe.getBoundingClientRect().width;
        probe.remove();
        if (width <= room) split.push(m[0]);
      }
    }
  }
  for (const td of document.querySelectorAll('td.name')) {
    const range = document.createRange();
    range.selectNodeContents(td);
    if (new Set(Array.from(range.getClientRects(), (r) => Math.round(r.top))).size > 1) split.push(td.textContent);
  }
  return split;
})()`;

const LONG_PATH = '/www/shopfront_42/public/wp-content/plugins/updraftplus/includes/class-updraftplus-storage-methods-interface.php:1234';

function failed(i: number): ReportResult {
  const site = `blue-${String(i).padStart(3, '0')}`;
  return {
    step_id: `0:${i}`,
    task: 'Plugin updates',
    action: 'plugins.update',
    target: { site, environment: 'live', env_id: `e${i}` },
    request: { method: 'PUT', path: `/sites/environments/e${i}/plugins/bulk-update`, body: { plugins: [{ name: 'updraftplus' }] } },
    status: 'failed',
    http_status: 202,
    operation_id: `op-${i}`,
    attempts: 1,
    error: null,
    reason: `health check failed after the write: HTTP 500 from https://${site}.example.com/ (PHP Fatal error in ${LONG_PATH})`,
    precondition: 'updraftplus 9.2.2 → 9.3.4',
    restore_point: { tag: 'sitefleet-before-plugin-updates-2026-11-20T02-00-00Z', backup_id: 1000 + i },
    restored: { backup_id: 1000 + i, operation_id: `op-r${i}`, status: 'succeeded', health: { outcome: 'healthy' } },
  };
}

describe('the pages wrap between words, in Chromium', { timeout: 60_000 }, () => {
  it('a run page’s tables and the record’s lists split no word that fits its line, on a laptop and on a phone', async () => {
    const ok = (i: number): ReportResult => ({ ...failed(i), status: 'succeeded', reason: null, restore_point: undefined, restored: undefined });
    const report = nightReport([failed(1), failed(2), ok(3), ok(4)]);
    const dir = tempDir();
    const pages = {
      run: join(dir, 'run.html'),
      record: join(dir, 'record.html'),
    };
    writeFileSync(pages.run, runPage({ report, reportPath: join(dir, 'r.json'), times: { missing: 'no journal' } }));
    writeFileSync(pages.record, recordPage({ reports: [report] }));
    for (const file of Object.values(pages)) {
      const watch = await browser.open(file);
      for (const width of [1100, 700, 420]) {
        await watch.page.setViewportSize({ width, height: 900 });
        expect({ file, width, split: await watch.page.evaluate<string[]>(SPLIT_WORDS) }).toEqual({ file, width, split: [] });
      }
    }
  });
});
