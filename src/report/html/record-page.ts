import { ACTIONS, restorePoint } from '../../actions/index.js';
import { isProblem, type Isolation } from '../../run/types.js';
import { changeText, culpritLog, isolationFacts, logExcerpt } from '../isolation-lines.js';
import { nameOf } from '../../inventory/kinds.js';
import type { RecordLine } from '../../actions/action.js';
import { restoreLine, type Report, type ReportResult } from '../report.js';
import { matchesAny } from '../../util/glob.js';
import { changedIn, changeWords, type StoodChange } from '../changed.js';
import { htmlDocument } from './document.js';
import { block, h, type Markup } from './markup.js';

/** What the maintenance record covers: the reports of a period, for the sites that match. */
export interface RecordInput {
  reports: readonly Report[];
  /** `--site GLOB`: one client's sites. */
  sites?: string[];
  /** The period's ends as given (`--since`, `--until`), for the header; else the reports' own. */
  since?: string;
  until?: string;
  title?: string;
  logo?: string;
  footer?: string;
}

/** One step of one run, with the run's day. */
interface Entry {
  r: ReportResult;
  day: string;
  at: number;
  /** An item write's updates that stand (report/changed.ts): what the record lists as done; undefined for other work. */
  stood?: StoodChange[];
}

const HOUR_MS = 3_600_000;
const DAY_MS = 24 * HOUR_MS;

/**
 * The runs, each once (a report named and also found by `--from`, or a copy beside it, is one run:
 * its newest report stands), oldest first; dry runs did nothing to list.
 */
function oncePerRun(reports: readonly Report[]): Report[] {
  const newest = new Map<string, Report>();
  for (const r of reports) {
    const known = newest.get(r.run_id);
    if (r.mode === 'run' && (!known || r.finished_at > known.finished_at)) newest.set(r.run_id, r);
  }
  return [...newest.values()].sort((a, b) => a.started_at.localeCompare(b.started_at));
}

/**
 * The month's maintenance record an agency sends its client: a section per site, what was done to it
 * (each action's own words: theme and plugin versions from → to, PHP versions, denied-IP lists, backups and their
 * ages, WP-CLI commands and what they printed), its health checks, and its incidents with what was
 * done about them. Only work a step did is listed as done; what failed is an incident.
 */
export function recordPage(input: RecordInput): string {
  const runs = oncePerRun(input.reports);
  const bySite = new Map<string, Entry[]>();
  for (const report of runs) {
    const changes = changedIn(report);
    for (const r of report.results) {
      const site = r.target.site;
      // A target skipped is no work, but what the company's history withheld from it is the client's to know.
      if (site === undefined || !matchesAny(site, input.sites) || (r.step_id === null && !r.withheld)) continue;
      const entries = bySite.get(site) ?? [];
      bySite.set(site, entries);
      const items = r.role !== 'backup' && ACTIONS.get(r.action)?.items !== undefined;
      entries.push({ r, day: report.started_at.slice(0, 10), at: Date.parse(report.started_at), ...(items && { stood: changes(r) }) });
    }
  }
  const since = input.since ?? runs[0]?.started_at.slice(0, 10) ?? '';
  const until = input.until ?? runs.at(-1)?.finished_at.slice(0, 10) ?? '';
  const asOf = runs.length > 0 ? Math.max(...runs.map((r) => Date.parse(r.finished_at))) : 0;
  const sections = [...bySite.keys()].sort().map((site) => siteSection(site, bySite.get(site)!, asOf));
  const body = h`<dl class="facts record-summary">
      <dt>Period</dt>
      <dd>${since} to ${until}</dd>
      <dt>Runs</dt>
      <dd>${runs.length}</dd>
      ${summaryFacts([...bySite.values()].flat(), bySite.size, quarantinedOf(runs, input.sites))}
    </dl>
    ${sections.length === 0 ? h`<p class="note">No work on a matching site in these reports.</p>` : sections}`;
  return htmlDocument({
    title: input.title ?? 'Maintenance record',
    subtitle: h`<p class="note">${since} to ${until}</p>`,
    ...(input.logo && { logo: input.logo }),
    ...(input.footer && { footer: input.footer }),
    body,
  });
}

/** What a step that did its work did, in its action's words (a restore point is a backup's step). */
function lineOf(r: ReportResult): RecordLine {
  const outcome = { target: r.target, body: r.request?.body, status: r.status, ...(r.output !== undefined && { output: r.output }) };
  const action = r.role === 'backup' ? restorePoint.action : ACTIONS.get(r.action);
  return action?.record?.({ ...outcome, ...(r.precondition !== undefined && { precondition: r.precondition }) }) ?? { heading: 'Other work', text: r.task };
}

/**
 * The record's summary at its top, over the sites it covers: how many, the updates that stand, the
 * writes put back (from a backup or by their items' files), the sites isolation took apart, and the
 * versions quarantined after they broke one of them.
 */
function summaryFacts(entries: readonly Entry[], sites: number, quarantined: string[]): Markup {
  const writes = entries.filter((e) => e.r.role !== 'backup');
  const updates = writes.reduce((n, e) => n + (e.stood?.length ?? 0), 0);
  const restores = writes.filter((e) => e.r.restored?.status === 'succeeded' || e.r.undone?.status === 'succeeded').length;
  const isolations = writes.filter((e) => e.r.isolation !== undefined).length;
  return h`<dt>Sites</dt>
    <dd>${sites}</dd>
    <dt>Updates</dt>
    <dd class="updates">${updates}</dd>
    <dt>Restores</dt>
    <dd class="restores">${restores}</dd>
    <dt>Isolations</dt>
    <dd class="isolations">${isolations}</dd>
    <dt>Quarantined versions</dt>
    <dd class="quarantined">${quarantined.length}${quarantined.length > 0 ? `: ${quarantined.join(', ')}` : ''}</dd>`;
}

/** The versions the runs quarantined on the record's sites, each once: `updraftplus 9.3.4`. */
function quarantinedOf(runs: readonly Report[], sites: string[] | undefined): string[] {
  const names = runs.flatMap((run) =>
    (run.quarantined ?? []).filter((q) => q.site !== undefined && matchesAny(q.site, sites)).map((q) => `${q.name} ${q.version}`),
  );
  return [...new Set(names)].sort();
}

/** A backup's age as the record gives it: hours under a day (`5 hours old`), days after. */
export function ageWords(ms: number): string {
  const hours = Math.floor(ms / HOUR_MS);
  if (hours < 1) return 'under an hour old';
  if (ms < DAY_MS) return `${hours} hour${hours === 1 ? '' : 's'} old`;
  const days = Math.floor(ms / DAY_MS);
  return `${days} day${days === 1 ? '' : 's'} old`;
}

/** What an entry did, in the record's words; undefined when it did nothing that stands (an item write the night took back). */
function doneLine(e: Entry): RecordLine | undefined {
  const line = lineOf(e.r);
  if (e.stood === undefined || e.r.status === 'accepted') return line;
  return e.stood.length === 0 ? undefined : { ...line, text: e.stood.map(changeWords).join(', ') };
}

function siteSection(site: string, entries: readonly Entry[], asOf: number): Markup {
  const done = new Map<string, Markup[]>();
  for (const e of entries) {
    const { r, day, at } = e;
    const line = r.step_id === null || (r.status !== 'succeeded' && r.status !== 'accepted' && !e.stood?.length) ? undefined : doneLine(e);
    if (!line) continue;
    const age = line.kind === 'backup' && asOf > 0 ? `, ${ageWords(asOf - at)}` : '';
    const pending = r.status === 'accepted' ? ' (accepted, not seen to finish)' : '';
    const items = done.get(line.heading) ?? [];
    done.set(line.heading, items);
    items.push(
      h`<li class="work">
        <span class="day">${day}</span> ${r.target.environment ?? ''}:
        ${line.text}${pending}${age}${line.detail === undefined ? '' : h`<pre>${block(line.detail)}</pre>`}
      </li>`,
    );
  }
  const work = [...done].map(
    ([heading, items]) =>
      h`<h4>${heading}</h4>
        <ul>
          ${items}
        </ul>`,
  );
  return h`<section class="site" data-site="${site}">
    <h3>${site}</h3>
    ${work.length > 0 ? work : h`<p class="note">No work done.</p>`} ${healthPart(entries)} ${isolationPart(entries)} ${incidentPart(entries)} ${withheldPart(entries)}
  </section>`;
}

function healthPart(entries: readonly Entry[]): Markup {
  const checked = entries.filter((e) => e.r.health !== undefined && e.r.role !== 'backup');
  if (checked.length === 0) return h``;
  const items = checked.map(
    ({ r, day }) =>
      h`<li class="check">
        <span class="day">${day}</span> ${r.target.environment ?? ''}: ${r.health!.outcome}${r.health!.after ? h` (${r.health!.after})` : ''}
      </li>`,
  );
  return h`<h4>Health checks (${checked.length})</h4>
    <ul>
      ${items}
    </ul>`;
}

/**
 * What `health.on_broken: isolate` did on the site: for each write that broke it, the update found
 * breaking it (and the version the site stays on), the error log's line, the other updates sent again
 * and kept, those not installed, and the restores it took. (Quarantined versions and retries have
 * their own parts beside this one.)
 */
function isolationPart(entries: readonly Entry[]): Markup {
  const isolated = entries.filter((e) => e.r.isolation !== undefined && e.r.role !== 'backup');
  if (isolated.length === 0) return h``;
  const items = isolated.map(({ r, day }) => {
    const iso = r.isolation!;
    const { culprits, kept, left } = isolationFacts(iso);
    const log = culpritLog(iso, r.logged);
    return h`<li class="isolation" data-outcome="${iso.outcome}">
      <span class="day">${day}</span> ${r.target.environment ?? ''}: ${OUTCOME_WORDS[iso.outcome]}${iso.reason ? h` (${iso.reason})` : ''}.
      ${culprits.map((c) => h`<br />Broke the site: ${changeText(c)}; it stays on ${c.from}.`)}
      ${log ? h`<br />Its error log: <code>${logExcerpt(log.line)}</code>` : ''}
      <br />Sent again and kept (${kept.length}): ${kept.length > 0 ? kept.map(changeText).join(', ') : 'none'}.
      ${left.length > 0 ? h`<br />Not installed (${left.length}): ${left.map(changeText).join(', ')}.` : ''}
      <br />Restores: ${iso.restores}.
    </li>`;
  });
  return h`<h4>Isolated updates (${isolated.length})</h4>
    <ul>
      ${items}
    </ul>`;
}

const OUTCOME_WORDS: Record<Isolation['outcome'], string> = {
  found: 'An update broke the site: it was found and left out, the others kept',
  'not reproduced': 'The site broke, but not again when its updates were sent again in rounds',
  stopped: 'Finding the update that broke the site stopped before the end',
  isolating: 'Finding the update that broke the site is not done (a resume goes on)',
};

function incidentPart(entries: readonly Entry[]): Markup {
  const incidents = entries.filter((e) => isProblem(e.r.status));
  if (incidents.length === 0) return h`<p class="note">No incidents.</p>`;
  const items = incidents.map(({ r, day }) => {
    const done = r.restore_point && r.role !== 'backup' ? restoreLine({ ...r, restore_point: r.restore_point }) : 'not restored';
    return h`<li class="incident">
      <span class="day">${day}</span> ${r.target.environment ?? ''}: ${r.task} ${r.status}: ${r.reason ?? r.error ?? ''}. What was done: ${done}.
    </li>`;
  });
  return h`<h4>Incidents (${incidents.length})</h4>
    <ul>
      ${items}
    </ul>`;
}

/** Updates left alone on the site: a version quarantined after it broke a site, an update waiting its backoff after a failure that may pass. */
function withheldPart(entries: readonly Entry[]): Markup {
  const seen = new Set<string>();
  const items = entries.flatMap(({ r, day }) =>
    (r.withheld ?? []).flatMap((d) => {
      const key = JSON.stringify([r.target.env_id, d.code, nameOf(d), d.version]);
      if (seen.has(key)) return [];
      seen.add(key);
      const what =
        d.code === 'quarantined'
          ? `quarantined: it broke a site on ${d.since.slice(0, 10)} (${d.why})`
          : d.code === 'retry_later'
            ? `to retry after ${d.retry_at.slice(0, 10)}: ${d.why}`
            : `held: a line of the company's records that cannot be read may name it`;
      return [
        h`<li class="withheld" data-code="${d.code}">
          <span class="day">${day}</span> ${r.target.environment ?? ''}: ${nameOf(d)} ${d.installed} → ${d.version} left alone, ${what}
        </li>`,
      ];
    }),
  );
  if (items.length === 0) return h``;
  return h`<h4>Updates left alone (${items.length})</h4>
    <ul>
      ${items}
    </ul>`;
}
