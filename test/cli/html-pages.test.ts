import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { groupOf } from '../../src/report/ci-formats.js';
import type { Report } from '../../src/report/report.js';
import { HOSTILE_NAMES } from '../../src/sim/hostile-names.js';
import { runCli, simEnv, tempDir, writePlaybook } from '../helpers/cli.js';
import { distinctColours, useBrowser, type PageWatch } from '../helpers/browser.js';
import { useSimulator } from '../helpers/sim.js';

/**
 * The pages in a real browser (Debian's chromium, driven by playwright-core), from a run against the
 * hostile corpus: no script runs, nothing is asked of the network, what the page shows is the report.
 */
const start = useSimulator();
const browser = useBrowser();

const PLAYBOOK =
  'version: 1\nname: php\nsettings: { wait: true }\ntasks:\n  - { name: php, action: php.set_version, target: all, with: { php_version: "8.3" } }\n  - { name: wp, action: wp_cli.run, target: { environment: live }, with: { wp_command: "wp core version" } }\n';

/**
 * A run against the hostile fleet with half its operations failing, its page written by `run --html`:
 * made by the first test that asks, and read by each (none changes what the run wrote).
 */
let hostile: Promise<{ dir: string; report: string; page: string }> | undefined;
const hostileRun = () => (hostile ??= runHostile());

async function runHostile(): Promise<{ dir: string; report: string; page: string }> {
  const { sim } = await start({ names: 'hostile', sites: HOSTILE_NAMES.length + 2, themes: 5, operationDelayMs: 20, seed: 4, failOperations: 0.5 });
  const dir = tempDir();
  const report = join(dir, 'r.json');
  const page = join(dir, 'run.html');
  const run = await runCli(
    ['run', writePlaybook(PLAYBOOK, dir), '--yes', '--report', report, '--html', page, '--poll-interval', '20', '--rate', '50/s', '--create-rate', '50/s'],
    simEnv(sim),
  );
  expect(run.code, run.stderr).toBe(1);
  return { dir, report, page };
}

/** The little of a DOM element these checks read (the project's types have no DOM). */
interface El {
  dataset: Record<string, string>;
  textContent: string | null;
  querySelectorAll(selector: string): ArrayLike<El>;
}

async function expectInert(watch: PageWatch): Promise<void> {
  expect(await watch.page.evaluate('window.__pwned')).toBeUndefined();
  expect(watch.dialogs).toEqual([]);
  expect(watch.requests).toEqual([]);
  // The markup of a name is text: no element the corpus tried to inject is in the document.
  expect(await watch.page.locator('img:not(header img), script, iframe').count()).toBe(0);
}

describe('the run page in Chromium, hostile names', { timeout: 60_000 }, () => {
  it('runs no script and asks for nothing; its figures, failed steps and timeline marks are the report and journal', async () => {
    const { report, page } = await hostileRun();
    const written = JSON.parse(readFileSync(report, 'utf8')) as Report;
    const watch = await browser.open(page);
    await expectInert(watch);

    const figures = await watch.page
      .locator('figure.task')
      .evaluateAll((els: El[]) =>
        els.map((f) => [
          f.dataset.task,
          Object.fromEntries(Array.from(f.querySelectorAll('td[data-status]'), (td) => [td.dataset.status, Number(td.textContent)])),
        ]),
      );
    const expected = new Map<string, Record<string, number>>();
    for (const r of written.results) {
      const counts = expected.get(groupOf(r)) ?? {};
      expected.set(groupOf(r), counts);
      counts[r.status] = (counts[r.status] ?? 0) + 1;
    }
    expect(new Map(figures as [string, Record<string, number>][])).toEqual(expected);

    const failed = written.results.filter((r) => r.status === 'failed' || r.status === 'unknown');
    expect(failed.length).toBeGreaterThan(3);
    const listed = await watch.page.locator('tr.problem').evaluateAll((rows: El[]) => rows.map((r) => r.dataset.step));
    expect((listed as string[]).sort()).toEqual(failed.map((r) => r.step_id).sort());
    // A hostile site name is shown as its text, control characters as the terminal shows them.
    expect(await watch.page.locator('table.problems').innerText()).toContain('<img src=x onerror="window.__pwned=1">');

    const sent = new Set(
      readFileSync(report.replace(/\.json$/, '.journal.jsonl'), 'utf8')
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l) as { t: string; step?: string })
        .filter((r) => r.t === 'intent')
        .map((r) => r.step!),
    );
    const marks = (await watch.page.locator('svg.timeline rect.mark').evaluateAll((m: El[]) => m.map((e) => e.dataset.step))) as string[];
    expect(marks).toHaveLength(sent.size);
    expect(new Set(marks)).toEqual(sent);

    const png = await watch.page.screenshot({ fullPage: true });
    expect(distinctColours(png)).toBeGreaterThan(1);
  });

  it('the maintenance record of --from DIR: a section per site, inert, and a page without a journal says it has no timeline', async () => {
    const { dir, report } = await hostileRun();
    const written = JSON.parse(readFileSync(report, 'utf8')) as Report;
    const record = join(dir, 'record.html');
    writeFileSync(join(dir, 'notes.json'), '{"not": "a report"}');
    const made = await runCli([
      'report',
      '--from',
      dir,
      '--html',
      record,
      '--title',
      '<script>window.__pwned=1</script>',
      '--footer',
      '<img src=x onerror=alert(1)>',
    ]);
    expect(made.code, made.stderr).toBe(0);
    expect(made.stderr).toContain('notes.json is not a report');
    const watch = await browser.open(record);
    await expectInert(watch);
    const sites = new Set(written.results.filter((r) => r.step_id !== null).map((r) => r.target.site));
    expect(await watch.page.locator('section.site').count()).toBe(sites.size);
    expect(await watch.page.locator('h1').innerText()).toBe('<script>window.__pwned=1</script>');
    expect(await watch.page.locator('li.incident').count()).toBe(written.results.filter((r) => r.status === 'failed' || r.status === 'unknown').length);

    const alone = join(tempDir(), 'alone.json');
    writeFileSync(alone, readFileSync(report));
    const page = join(dir, 'alone.html');
    expect((await runCli(['report', alone, '--html', page])).code).toBe(0);
    const aloneWatch = await browser.open(page);
    await expectInert(aloneWatch);
    expect(await aloneWatch.page.locator('.timeline-missing').innerText()).toContain('no journal beside the report');
    expect(await aloneWatch.page.locator('svg.timeline').count()).toBe(0);
  });

  it('a period that holds no time, or a folder with no run in it, is exit 2 in one line and writes nothing', async () => {
    const dir = tempDir();
    const page = join(dir, 'p.html');
    const reversed = await runCli(['report', '--from', dir, '--since', '2026-11-30', '--until', '2026-11-01', '--html', page]);
    expect(reversed.code).toBe(2);
    expect(reversed.stderr).toBe('sitefleet: --since 2026-11-30 is not before --until 2026-11-01: the period holds no time\n');
    const empty = await runCli(['report', '--from', dir, '--html', page]);
    expect(empty.code).toBe(2);
    expect(empty.stderr).toBe(`sitefleet: --from ${dir}: no report of a run; nothing was written\n`);
    expect(existsSync(page)).toBe(false);
  });
});
