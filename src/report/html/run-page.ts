import { nameOf } from '../../inventory/kinds.js';
import { kindWord } from '../kind-word.js';
import { shellQuote } from '../../util/safe-text.js';
import { taskCounts } from '../task-counts.js';
import { isProblem } from '../../run/types.js';
import { exitMeaning } from '../../errors.js';
import { continueCommand } from '../ci-formats.js';
import { exitCodeOf, restoreLine, type Report, type ReportResult } from '../report.js';
import type { StepStatus } from '../../run/types.js';
import { releaseAgeGroups } from '../release-age-lines.js';
import { isolatedResults, isolationLine } from '../isolation-lines.js';
import { withheldGroups, withheldWhen } from '../withheld-lines.js';
import { pageRows } from '../staging-lines.js';
import { quarantinedVersions } from '../quarantined.js';
import { changedGroups } from '../changed.js';
import { htmlDocument } from './document.js';
import { h, type Markup } from './markup.js';
import type { RunTimes } from './spans.js';
import { timelineSvg } from './timeline.js';
import { shownPages, visualSection } from './visual-section.js';

/** The statuses in the order a figure stacks them. */
export const STATUS_ORDER: readonly StepStatus[] = ['succeeded', 'accepted', 'planned', 'failed', 'held', 'unknown', 'skipped'];

/** What the page knows beside the report: where it is (for the commands), and the journal's times or why there are none. */
export interface RunPageInput {
  report: Report;
  reportPath: string;
  times: RunTimes | { missing: string };
  title?: string;
  logo?: string;
  footer?: string;
  /** From the page's folder to the report's, `/`-separated (`../reports`); empty when the page is beside the report. @default "" */
  imageBase?: string;
}

/** The run's page: header, a figure per task, the timeline, the steps that need a person, and the commands that continue. */
export function runPage(input: RunPageInput): string {
  const { report } = input;
  const body = h`${headerFacts(report)}
    <h2>Tasks</h2>
    ${taskFigures(report)} ${changedSection(report)}
    <h2>Timeline</h2>
    ${'missing' in input.times ? h`<p class="note timeline-missing">No timeline: ${input.times.missing}.</p>` : timelineSection(report, input.times)}
    ${problemSection(report)} ${visualSection(report.results, input.imageBase ?? '')} ${withheldSection(report)} ${releaseAgeSection(report)} ${stagingSection(report)} ${restoredSection(report)} ${isolatedSection(report, input.reportPath)} ${quarantinedSection(report)} ${nextSection(report, input.reportPath)}`;
  return htmlDocument({
    title: input.title ?? `sitefleet: ${report.name}${report.mode === 'dry-run' ? ' (dry run)' : ''}`,
    ...(input.logo && { logo: input.logo }),
    ...(input.footer && { footer: input.footer }),
    ...(shownPages(report.results).length > 0 && { localImages: true as const }),
    body,
  });
}

function headerFacts(report: Report): Markup {
  const code = exitCodeOf(report);
  const meaning = `${exitMeaning(code)}${report.stopped ? `: ${report.stopped.reason}` : ''}`;
  return h`<dl class="facts">
    <dt>Playbook</dt>
    <dd>${report.name} (${report.playbook})</dd>
    <dt>Company</dt>
    <dd>${report.company}</dd>
    <dt>Mode</dt>
    <dd>${report.mode}</dd>
    <dt>Started</dt>
    <dd>${report.started_at}</dd>
    <dt>Finished</dt>
    <dd>${report.finished_at}</dd>
    <dt>Exit code</dt>
    <dd class="exit-code" data-code="${code}">${code}: ${meaning}</dd>
    <dt>Steps</dt>
    <dd>${report.summary.total}</dd>
  </dl>`;
}

/** A figure per task: a bar of its counts by status, and the counts as a table (what a test and a reader check). */
function taskFigures(report: Report): Markup {
  const figures = taskCounts(report.results).map(({ task, counts: all }) => {
    // The statuses this task has, as the figure shows them.
    const counts = new Map(STATUS_ORDER.filter((s) => all[s] > 0).map((s) => [s, all[s]]));
    const total = [...counts.values()].reduce((a, b) => a + b, 0);
    let x = 0;
    const bars = STATUS_ORDER.filter((s) => counts.has(s)).map((s) => {
      const width = (counts.get(s)! / total) * 1000;
      const bar = h`<rect class="s-${s}" x="${Math.round(x * 100) / 100}" y="0" width="${Math.round(width * 100) / 100}" height="24"
        ><title>${s}: ${counts.get(s)}</title></rect
      >`;
      x += width;
      return bar;
    });
    const cells = STATUS_ORDER.filter((s) => counts.has(s)).map(
      (s) =>
        h`<tr>
          <td><span class="k s-${s}"></span>${s}</td>
          <td class="n" data-status="${s}">${counts.get(s)}</td>
        </tr>`,
    );
    return h`<figure class="task" data-task="${task}">
      <figcaption>${task}: ${total} ${total === 1 ? 'target' : 'targets'}</figcaption>
      <svg viewBox="0 0 1000 24" preserveAspectRatio="none" role="img" aria-label="${task} by status">${bars}</svg>
      <table class="counts">
        ${cells}
      </table>
    </figure>`;
  });
  return h`${figures}`;
}

/** What the run changed: each item's versions once, with the sites where the update stands (report/changed.ts); nothing when it changed none. */
function changedSection(report: Report): Markup {
  const groups = changedGroups(report);
  if (groups.length === 0) return h``;
  const rows = groups.map(
    (g) =>
      h`<tr class="changed" data-kind="${g.kind}" data-name="${g.name}" data-to="${g.to}">
        <td>${g.kind} ${g.name}</td>
        <td>${g.from}</td>
        <td>${g.to}</td>
        <td class="n">${g.sites}</td>
        <td class="where">${g.where.join(', ')}</td>
      </tr>`,
  );
  return h`<h2>Updated (${groups.length})</h2>
    ${table(['item', 'from', 'to', 'sites', 'where'], rows, 'changed')}`;
}

function timelineSection(report: Report, times: RunTimes): Markup {
  const sent = report.results.filter((r) => r.step_id !== null && times.spans.has(r.step_id)).length;
  return h`<p class="note">
      ${sent} sent ${sent === 1 ? 'step' : 'steps'}, each from its send to its operation's end. <span class="k s-succeeded"></span>succeeded
      <span class="k s-accepted"></span>accepted <span class="k s-failed"></span>failed <span class="k s-unknown"></span>unknown; a ring: the site's health
      checked after the write; a diamond: the site restored; a dashed line: the window's end.
    </p>
    <figure class="timeline">${timelineSvg(report.results, times)}</figure>`;
}

/** Site and environment apart where the step had them; else what it acted on (a domain, a site id). */
function whereCells(r: ReportResult): Markup {
  const { site, environment, domain, site_id } = r.target;
  return h`<td class="name">${site ?? domain ?? site_id ?? r.target.company ?? 'company'}</td>
    <td class="name">${environment ?? ''}</td>`;
}

function problemSection(report: Report): Markup {
  const problems = report.results.filter((r) => isProblem(r.status));
  if (problems.length === 0)
    return h`<h2>Failed, held and unknown steps</h2>
      <p class="none-failed">None.</p>`;
  const rows = problems.map(
    (r) =>
      h`<tr class="problem" data-step="${r.step_id ?? ''}">
        <td class="st">${r.status}</td>
        ${whereCells(r)}
        <td>${r.task}</td>
        <td>${r.reason ?? r.error ?? ''}</td>
        <td>${restoreText(r)}</td>
      </tr>`,
  );
  return h`<h2>Failed, held and unknown steps (${problems.length})</h2>
    ${table(['status', 'site', 'environment', 'task', 'reason', 'restore point'], rows, 'problems')}`;
}

/** Updates the company's history left alone (quarantined versions, writes waiting their backoff), once per version, with when, where, why and the override. */
function withheldSection(report: Report): Markup {
  const groups = withheldGroups(report.results);
  if (groups.length === 0) return h``;
  const rows = groups.map(
    ({ task, decision: d, environments }) =>
      h`<tr class="withheld" data-code="${d.code}">
        <td>${d.code}</td>
        <td>${task}</td>
        <td>${nameOf(d)} ${d.installed} → ${d.version}</td>
        <td class="n">${environments}</td>
        <td>${withheldWhen(d)}</td>
        <td>${d.why}</td>
        <td>${d.override}</td>
      </tr>`,
  );
  return h`<h2>Quarantined and waiting to retry (${groups.length})</h2>
    ${table(['code', 'task', kindWord(groups.map((g) => g.decision)), 'environments', 'when and where', 'why', 'override'], rows, 'withheld')}`;
}

/** Item updates (themes, plugins) the release age held back or sent before their age, once per version, with their dates; nothing when there are none. */
function releaseAgeSection(report: Report): Markup {
  const groups = releaseAgeGroups(report.results);
  if (groups.length === 0) return h``;
  const rows = groups.map(
    ({ task, decision: d, environments }) =>
      h`<tr class="release-age" data-code="${d.code}">
        <td>${d.code}</td>
        <td>${task}</td>
        <td>${nameOf(d)} ${d.installed} → ${d.version}</td>
        <td class="n">${environments}</td>
        <td>${d.first_seen}</td>
        <td>${d.held ? d.eligible_at : 'sent'}</td>
        <td>${d.override}</td>
      </tr>`,
  );
  return h`<h2>Release age (${groups.length})</h2>
    ${table(['code', 'task', kindWord(groups.map((g) => g.decision)), 'environments', 'first seen', 'eligible', 'override'], rows, 'release-age')}`;
}

/** Staging first, site by site: staged tonight, soaking until when, promoted, or why live waits; nothing when no task stages. */
function stagingSection(report: Report): Markup {
  const { rows, more } = pageRows(report.results);
  if (rows.length === 0) return h``;
  const cells = rows.map(
    ({ task, site, environment, decision: d }) =>
      h`<tr class="staging" data-code="${d.code}">
        <td>${d.code}</td>
        <td class="name">${site}</td>
        <td class="name">${environment}</td>
        <td>${task}</td>
        <td>${nameOf(d)} ${d.version}</td>
        <td>${d.since ?? ''}</td>
        <td>${d.until ?? d.failed_at ?? ''}</td>
        <td>${d.why ?? d.override ?? ''}</td>
      </tr>`,
  );
  return h`<h2>Staging first (${rows.length + more})</h2>
    ${table(['code', 'site', 'environment', 'task', kindWord(rows.map((r) => r.decision)), 'on staging since', 'until / failed at', 'why or override'], cells, 'staging')}
    ${more > 0 ? h`<p class="note">${more} more in the report.</p>` : h``}`;
}

/** A table that scrolls sideways on a phone rather than squeezing its columns. */
function table(headers: string[], rows: Markup[], className = ''): Markup {
  return h`<div class="scroll">
      <table class="${className}">
        <thead>
          <tr>
            ${headers.map((header) => h`<th>${header}</th>`)}
          </tr>
        </thead>
        <tbody>
          ${rows}
        </tbody>
      </table>
    </div>`;
}

function restoreText(r: ReportResult): string {
  return r.restore_point && r.role !== 'backup' ? restoreLine({ ...r, restore_point: r.restore_point }) : '';
}

function restoredSection(report: Report): Markup {
  const restored = report.results.filter((r) => r.restored !== undefined && r.restore_point !== undefined);
  if (restored.length === 0) return h``;
  const rows = restored.map(
    (r) =>
      h`<tr class="restored" data-step="${r.step_id ?? ''}">
        ${whereCells(r)}
        <td>${r.task}</td>
        <td>${restoreText(r)}</td>
      </tr>`,
  );
  return h`<h2>Restored sites (${restored.length})</h2>
    ${table(['site', 'environment', 'task', 'what became of it'], rows)}`;
}

/**
 * The sites `health.on_broken: isolate` took apart: the update that broke each (with the error log's
 * line), what was kept, what is left, and how many restores it took.
 */
function isolatedSection(report: Report, reportPath: string): Markup {
  const isolated = isolatedResults(report.results);
  if (isolated.length === 0) return h``;
  const next = continueCommand(report, reportPath);
  const rows = isolated.map(
    (r) =>
      h`<tr class="isolated" data-step="${r.step_id ?? ''}" data-outcome="${r.isolation?.outcome ?? 'logged'}">
        ${whereCells(r)}
        <td>${r.task}</td>
        <td>${isolationLine(r, next) ?? ''}</td>
      </tr>`,
  );
  return h`<h2>Isolated updates (${isolated.length})</h2>
    ${table(['site', 'environment', 'task', 'what broke it, what was kept'], rows)}`;
}

/** The versions this run found to break a site (the report's `quarantined`), once each: what the company's later runs leave alone, and what sends one again. */
function quarantinedSection(report: Report): Markup {
  const versions = quarantinedVersions(report.quarantined);
  if (versions.length === 0) return h``;
  const rows = versions.map(
    (q) =>
      h`<tr class="quarantined" data-kind="${q.kind}" data-name="${q.name}" data-version="${q.version}">
        <td>${q.kind} ${q.name} ${q.version}</td>
        <td class="n">${q.environments}</td>
        <td>${q.first.site ?? q.first.env_id}${q.first.environment ? `/${q.first.environment}` : ''} at ${q.first.at}</td>
        <td>${q.first.why}</td>
        <td><code>${q.override}</code></td>
      </tr>`,
  );
  return h`<h2>Quarantined by this run (${versions.length})</h2>
    <p class="note">Sent by no later run of the company until released.</p>
    ${table(['version', 'environments it broke', 'first broke', 'why', 'to send it again'], rows, 'quarantined')}`;
}

/** The commands that carry the work on: resume or status (as the CI summaries say), and a restore of failed writes not yet put back. */
function nextSection(report: Report, reportPath: string): Markup {
  const commands: string[] = [];
  const next = continueCommand(report, reportPath);
  if (next) commands.push(next);
  const unrestored = report.results.some((r) => r.status === 'failed' && r.role !== 'backup' && r.restore_point && !r.restored);
  if (unrestored) commands.push(`sitefleet restore ${shellQuote(reportPath)} --dry-run`);
  if (commands.length === 0)
    return h`<h2>Next</h2>
      <p class="note">Nothing left to continue.</p>`;
  return h`<h2>Next</h2>
    <ul class="next">
      ${commands.map((c) => h`<li><code>${c}</code></li>`)}
    </ul>`;
}
