import { describe, expect, it } from 'vitest';
import { commandText, githubAnnotations, junitXml, markdownSummary, nextCommand } from '../../src/report/ci-formats.js';
import { runPage } from '../../src/report/html/run-page.js';
import { targetLabel, type Report, type ReportResult } from '../../src/report/report.js';
import { nightReport, runEndOf } from '../helpers/sinks.js';
import { taskCounts } from '../../src/report/task-counts.js';
import { renderSummary } from '../../src/cli/render.js';
import { jsonSummary, type RunEnd } from '../../src/notify/run-end.js';
import { slackMessage } from '../../src/notify/slack.js';
import { runSamples } from '../../src/notify/metrics.js';
import { isProblem, type StepStatus } from '../../src/run/types.js';

/**
 * Every output of a run shows what the report says: the same counts and the same next command. A
 * sink that counted on its own, or chose its own next command, fails here.
 */
const PATH = "/var/log/sitefleet/night's run.json";

let n = 0;
function result(task: string, status: StepStatus, extra: Partial<ReportResult> = {}): ReportResult {
  n++;
  return {
    step_id: `s${n}`,
    task,
    action: 'themes.update',
    target: { site: `site-${n}`, environment: 'live', env_id: `e${n}` },
    request: { method: 'PUT', path: `/sites/environments/e${n}/themes/bulk-update` },
    status,
    http_status: status === 'skipped' ? null : 202,
    operation_id: status === 'skipped' ? null : `op-${n}`,
    attempts: status === 'skipped' ? 0 : 1,
    error: null,
    reason: isProblem(status) ? 'theme broke' : null,
    ...extra,
  };
}

function report(results: ReportResult[], stopped: Report['stopped'] = null): Report {
  return nightReport(results, { started_at: '2026-11-24T02:00:00.000Z', finished_at: '2026-11-24T02:10:00.000Z', stopped });
}

const CASES: Record<string, Report> = {
  clean: report([result('themes', 'succeeded'), result('themes', 'accepted'), result('backup', 'succeeded')]),
  'failures and unknowns': report([
    result('themes', 'succeeded'),
    result('themes', 'failed'),
    result('themes', 'unknown'),
    result('themes', 'succeeded', { role: 'backup' }),
    result('php', 'failed'),
  ]),
  'stopped by the budget, steps never sent': report(
    [result('themes', 'failed'), result('themes', 'failed'), result('themes', 'skipped'), result('themes', 'skipped')],
    { kind: 'budget', reason: 'failure budget exceeded in task "themes": 1' },
  ),
  'window closed': report([result('themes', 'succeeded'), result('themes', 'skipped')], { kind: 'window', reason: 'closes at 06:00' }),
  'operations still running': report([result('themes', 'accepted'), result('themes', 'succeeded')]),
  'a held step (health.visual)': report([
    result('themes', 'succeeded'),
    result('themes', 'held', {
      reason: 'visual_difference: 3.2% of the page changed at https://shop.example/ (diff night.json.visual/0_e-p0-diff.png)',
      held: {
        code: 'visual_difference',
        changed_percent: 3.2,
        url: 'https://shop.example/',
        diff: 'night.json.visual/0_e-p0-diff.png',
        override: 'the update stays; to let such a change pass, raise health.visual.hold_over above 3.2%',
      },
      visual: {
        outcome: 'held',
        pages: [
          {
            url: 'https://shop.example/',
            verdict: 'changed',
            changed_percent: 3.2,
            noise_percent: 0,
            images: { before: 'a/b-before.png', after: 'a/b-after.png', mask: 'a/b-mask.png', diff: 'night.json.visual/0_e-p0-diff.png' },
          },
        ],
      },
    }),
    result('php', 'failed'),
  ]),
  'a restore not seen to end': report([
    result('themes', 'failed', {
      restore_point: { tag: 'sitefleet-before-themes-2026-11-24', backup_id: 7 },
      restored: { backup_id: 7, operation_id: 'op-r', status: 'accepted' },
    }),
  ]),
};

const end = (r: Report): RunEnd => runEndOf(r, PATH);

describe.each(Object.entries(CASES))('every sink shows the report: %s', (_name, r) => {
  const s = r.summary;
  const problems = s.failed + s.held + s.unknown;
  const next = nextCommand(r, PATH);
  const typed = next && commandText(next);

  it('the terminal summary: the headline counts, a row per task, and the next command', () => {
    const text = renderSummary(r, PATH);
    expect(text).toContain(
      `${s.total} steps: ${s.accepted + s.succeeded} ok (${s.accepted} accepted, ${s.succeeded} succeeded), ${s.failed} failed, ${s.held} held, ${s.unknown} unknown, ${s.skipped} skipped`,
    );
    for (const { task, counts: c } of taskCounts(r.results))
      expect(text).toMatch(
        new RegExp(
          `^${task}\\s+${Object.values(c).reduce((a, b) => a + b)}\\s+${c.accepted + c.succeeded}\\s+${c.failed}\\s+${c.held}\\s+${c.unknown}\\s+${c.skipped}\\s`,
          'm',
        ),
      );
    if (typed) expect(text).toContain(`: ${typed}`);
    else expect(text).not.toMatch(/sitefleet (resume|status|restore)/);
  });

  it('JUnit: one failure per problem step, tests and skips as counted', () => {
    const xml = junitXml(r);
    expect(xml).toContain(`tests="${s.total}" failures="${problems}" skipped="${s.skipped}"`);
    expect(xml.match(/<failure /g)?.length ?? 0).toBe(problems);
  });

  it('Markdown: the same row per task, the problems counted, the same next command', () => {
    const md = markdownSummary(r, PATH);
    for (const { task, counts: c } of taskCounts(r.results))
      expect(md).toContain(
        `| ${task} | ${Object.values(c).reduce((a, b) => a + b)} | ${c.accepted + c.succeeded} | ${c.failed} | ${c.held} | ${c.unknown} | ${c.skipped} |`,
      );
    if (problems) expect(md).toContain(`**${problems} failed, held or unknown:**`);
    for (const held of r.results.filter((x) => x.status === 'held')) expect(md).toContain(`- held ${targetLabel(held)} (${held.task}): visual\\_difference: `);
    if (typed) expect(md).toContain(typed);
    else expect(md).not.toMatch(/sitefleet (resume|status|restore)/);
  });

  it('GitHub annotations: one per problem step, a warning for a held one', () => {
    expect(githubAnnotations(r)).toHaveLength(problems);
    expect(githubAnnotations(r).filter((a) => a.startsWith('::warning '))).toHaveLength(s.held);
  });

  it('the run page: each task’s counts, and the same next command', () => {
    const html = runPage({ report: r, reportPath: PATH, times: { missing: 'no journal in this test' } });
    for (const { task, counts } of taskCounts(r.results)) {
      const figure = html.slice(html.indexOf(`data-task="${task.replace(/"/g, '&quot;')}"`));
      for (const [status, count] of Object.entries(counts)) if (count > 0) expect(figure).toMatch(new RegExp(`data-status="${status}">${count}<`));
    }
    if (typed) expect(html).toContain(typed.replace(/&/g, '&amp;').replace(/'/g, '&#39;'));
    // Every held page with its before, after and diff side by side, from the report's folder.
    for (const held of r.results.filter((x) => x.status === 'held'))
      for (const kind of ['before', 'after', 'diff'] as const) expect(html).toContain(`<img src="${held.visual!.pages[0]!.images![kind]}" alt="${kind}"`);
  });

  it('the webhook: the summary, the tasks, the problems and the next command, as text and as data', () => {
    const body = jsonSummary(end(r), new Date('2026-11-24T02:10:01Z'));
    expect(body.summary).toEqual(s);
    expect(body.tasks).toEqual(taskCounts(r.results));
    expect((body.problems as unknown[]).length + (body.problems_not_listed as number)).toBe(problems);
    expect(body.continue_with).toBe(typed ?? null);
    const listed = body.problems as { status: string; held: unknown }[];
    for (const p of listed) expect(p.held).toEqual(p.status === 'held' ? r.results.find((x) => x.status === 'held')!.held : null);
    expect(body.next_command).toEqual(next ?? null);
  });

  it('Slack: the counts that are not zero, and the same next command', () => {
    const message = slackMessage(end(r), new Date('2026-11-24T02:10:01Z'));
    for (const status of ['succeeded', 'accepted', 'failed', 'held', 'unknown', 'skipped'] as const)
      if (s[status] > 0) expect(message.text).toContain(`${s[status]} ${status}`);
    const blocks = JSON.stringify(message.blocks);
    if (typed) expect(blocks).toContain(JSON.stringify(typed).slice(1, -1));
    else expect(blocks).not.toContain('continue with');
  });

  it('metrics: per task and status, the same counts', () => {
    const steps = runSamples(end(r)).get('sitefleet_steps')!;
    for (const { task, counts } of taskCounts(r.results))
      for (const [status, count] of Object.entries(counts))
        if (status !== 'planned') expect(steps).toContain(`sitefleet_steps{playbook="night",task="${task}",status="${status}"} ${count}`);
  });
});

describe('the next command, as data', () => {
  it('is chosen by what is left: a restore running first, then steps never sent, then operations running', () => {
    expect(nextCommand(CASES['a restore not seen to end']!, PATH)).toEqual({ kind: 'restore', argv: ['restore', PATH] });
    expect(nextCommand(CASES['stopped by the budget, steps never sent']!, PATH)).toEqual({ kind: 'resume', argv: ['resume', PATH, '--max-failures', '2'] });
    expect(nextCommand(CASES['window closed']!, PATH)).toEqual({ kind: 'resume', argv: ['resume', PATH] });
    expect(nextCommand(CASES['operations still running']!, PATH)).toEqual({ kind: 'status', argv: ['status', PATH, '--wait'] });
    expect(nextCommand(CASES.clean!, PATH)).toEqual({ kind: 'status', argv: ['status', PATH, '--wait'] });
    expect(commandText(nextCommand(CASES['window closed']!, PATH)!)).toBe(`sitefleet resume '/var/log/sitefleet/night'\\''s run.json'`);
  });
});
