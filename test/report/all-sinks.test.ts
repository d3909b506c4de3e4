import { describe, expect, it } from 'vitest';
import { commandText, githubAnnotations, junitXml, markdownSummary, nextCommand } from '../../src/report/ci-formats.js';
import { runPage } from '../../src/report/html/run-page.js';
import { summarize, type Report, type ReportResult } from '../../src/report/report.js';
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
  return {
    version: 1,
    run_id: '5b0c6a52-4d3e-4b8e-9f4a-3c2b1a0f9e8d',
    playbook: 'night.yaml',
    name: 'night',
    company: '0f1e2d3c-4b5a-4697-8877-665544332211',
    mode: 'run',
    started_at: '2026-11-24T02:00:00.000Z',
    finished_at: '2026-11-24T02:10:00.000Z',
    stopped,
    summary: summarize(results),
    results,
  };
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
  'a restore not seen to end': report([
    result('themes', 'failed', {
      restore_point: { tag: 'sitefleet-before-themes-2026-11-24', backup_id: 7 },
      restored: { backup_id: 7, operation_id: 'op-r', status: 'accepted' },
    }),
  ]),
};

const end = (r: Report): RunEnd => ({
  name: r.name,
  company: r.company,
  runId: r.run_id,
  exitCode: 1,
  startedAt: new Date(r.started_at),
  finishedAt: new Date(r.finished_at),
  report: { value: r, path: PATH },
});

describe.each(Object.entries(CASES))('every sink shows the report: %s', (_name, r) => {
  const s = r.summary;
  const problems = s.failed + s.unknown;
  const next = nextCommand(r, PATH);
  const typed = next && commandText(next);

  it('the terminal summary: the headline counts, a row per task, and the next command', () => {
    const text = renderSummary(r, PATH);
    expect(text).toContain(
      `${s.total} steps: ${s.accepted + s.succeeded} ok (${s.accepted} accepted, ${s.succeeded} succeeded), ${s.failed} failed, ${s.unknown} unknown, ${s.skipped} skipped`,
    );
    for (const { task, counts: c } of taskCounts(r.results))
      expect(text).toMatch(
        new RegExp(
          `^${task}\\s+${Object.values(c).reduce((a, b) => a + b)}\\s+${c.accepted + c.succeeded}\\s+${c.failed}\\s+${c.unknown}\\s+${c.skipped}\\s`,
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
        `| ${task} | ${Object.values(c).reduce((a, b) => a + b)} | ${c.accepted + c.succeeded} | ${c.failed} | ${c.unknown} | ${c.skipped} |`,
      );
    if (problems) expect(md).toContain(`**${problems} failed or unknown:**`);
    if (typed) expect(md).toContain(typed);
    else expect(md).not.toMatch(/sitefleet (resume|status|restore)/);
  });

  it('GitHub annotations: one per problem step', () => {
    expect(githubAnnotations(r)).toHaveLength(problems);
  });

  it('the run page: each task’s counts, and the same next command', () => {
    const html = runPage({ report: r, reportPath: PATH, times: { missing: 'no journal in this test' } });
    for (const { task, counts } of taskCounts(r.results)) {
      const figure = html.slice(html.indexOf(`data-task="${task.replace(/"/g, '&quot;')}"`));
      for (const [status, count] of Object.entries(counts)) if (count > 0) expect(figure).toMatch(new RegExp(`data-status="${status}">${count}<`));
    }
    if (typed) expect(html).toContain(typed.replace(/&/g, '&amp;').replace(/'/g, '&#39;'));
  });

  it('the webhook: the summary, the tasks, the problems and the next command, as text and as data', () => {
    const body = jsonSummary(end(r), new Date('2026-11-24T02:10:01Z'));
    expect(body.summary).toEqual(s);
    expect(body.tasks).toEqual(taskCounts(r.results));
    expect((body.problems as unknown[]).length + (body.problems_not_listed as number)).toBe(problems);
    expect(body.continue_with).toBe(typed ?? null);
    expect(body.next_command).toEqual(next ?? null);
  });

  it('Slack: the counts that are not zero, and the same next command', () => {
    const message = slackMessage(end(r), new Date('2026-11-24T02:10:01Z'));
    for (const status of ['succeeded', 'accepted', 'failed', 'unknown', 'skipped'] as const)
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
