import { targetNoun } from '../actions/action.js';
import { taskCounts } from '../report/task-counts.js';
import { problemCount } from '../run/types.js';
import { bySite, problemSites, siteText } from '../report/site-problems.js';
import { ACTIONS, restoreFrom } from '../actions/index.js';
import { databaseLines } from '../report/database-lines.js';
import { backupSlotsSummary } from '../report/backup-slot-lines.js';
import { commandText, groupOf, nextCommand, type NextCommand } from '../report/ci-formats.js';
import { styleText } from 'node:util';
import type { Io, Output } from '../app/io.js';
import { formatProblem, type InputProblem } from '../errors.js';
import { answerLines } from '../report/answer-lines.js';
import { installedOf, type Inventory } from '../inventory/inventory.js';
import { itemOf, KIND_TABLE, KINDS, type Kind, OTHER_KINDS } from '../inventory/kinds.js';
import { versionKey } from '../util/item-version.js';
import { guardCount, stepHealthUrl, type Plan, type Step } from '../plan/plan.js';
import { ENDPOINTS } from '../api/endpoints.js';
import { clearsCache } from '../health/spec.js';
import { planReasons } from '../report/reasons.js';
import { changedLines, moreChangedLine } from '../report/changed.js';
import { releaseAgeLines } from '../report/release-age-lines.js';
import { stagingLines } from '../report/staging-lines.js';
import { withheldLines } from '../report/withheld-lines.js';
import { healthCounts, pagesNotLookedAt, restoreLine, restorePointsOfFailures, targetLabel, unhealthyBefore, type Report } from '../report/report.js';
import { clip, forCsv, forTerminal, jsonText, MESSAGE_WIDTH, terminalMessage, terminalName } from '../util/safe-text.js';
import { isolatedResults, isolationLine } from '../report/isolation-lines.js';
import { cacheNotAvailableLine, nothingSeenLines } from '../report/look-lines.js';

type Colour = 'green' | 'red' | 'yellow' | 'cyan' | 'dim' | 'bold';

/**
 * Colour only for a terminal that wants it (NO_COLOR and pipes get plain text). The text is made
 * safe first, so the only escape sequences in the line are the tool's own.
 */
export function paint(colour: Colour, text: string, stream: Output, env: Io['env'] = {}): string {
  const safe = forTerminal(text);
  if (!stream.isTTY || env.NO_COLOR !== undefined) return safe;
  // This stream was asked already; styleText would ask process.stdout, whichever stream we write to.
  return styleText(colour, safe, { validateStream: false });
}

/** Paints a line's text in a colour, or leaves it plain: how a renderer colours without knowing where it prints. */
export type Painter = (colour: Colour, text: string) => string;

/** No colour: the text made safe for the terminal. */
export const plain: Painter = (_colour, text) => forTerminal(text);

/** Colour for `io`'s stdout when it is a terminal that wants it. */
export function painter(io: Pick<Io, 'stdout' | 'env'>): Painter {
  return (colour, text) => paint(colour, text, io.stdout, io.env);
}

/** A located warning (a problem that does not stop the command) as one safe line. */
export function warningLine(p: InputProblem): string {
  return forTerminal(formatProblem({ ...p, message: `warning: ${p.message}` }));
}

/** Left-aligned columns, numbers right-aligned; every cell made safe for the terminal and clipped. */
export function table(header: string[], rows: (string | number)[][]): string {
  const cells = [header, ...rows.map((r) => r.map((value) => terminalName(String(value))))];
  const widths = header.map((_, i) => Math.max(...cells.map((r) => (r[i] ?? '').length)));
  return cells
    .map((row, ri) =>
      row
        .map((cell, i) => (ri > 0 && typeof rows[ri - 1]![i] === 'number' ? cell.padStart(widths[i]!) : cell.padEnd(widths[i]!)))
        .join('  ')
        .trimEnd(),
    )
    .join('\n');
}

/** A plan file may come from another version: an action unknown here selects environments. */
function noun(action: string): string {
  const known = ACTIONS.get(action);
  return known ? targetNoun(known) : 'environment';
}

/**
 * The other kinds the plan read (plugins), each with its count, and where the company listing could
 * not be used, that each environment's own listing was read instead, and why: a person reading the
 * plan sees what it was made from and what the reads cost. A theme-only plan's line is as before.
 */
function otherKindsRead(plan: Plan): string {
  return OTHER_KINDS.map((kind) => {
    const plural = KIND_TABLE[kind].plural as Exclude<(typeof KIND_TABLE)[Kind]['plural'], 'themes'>;
    const count = plan.inventory[plural];
    if (count === undefined) return '';
    // A kind of one item (WordPress): its versions are what was read, from the site listing.
    if (KIND_TABLE[kind].only !== undefined) return `, ${KIND_TABLE[kind].only} versions from the site listing`;
    const why = plan.inventory[`${plural}_from_environments`];
    return why === undefined ? `, ${count} ${plural} in the listing` : `, ${count} ${plural} read from each environment's own listing (${why})`;
  }).join('');
}

export function renderPlan(plan: Plan, verbose: boolean, paint: Painter = plain, now = Date.now()): string {
  const lines: string[] = [];
  lines.push(
    forTerminal(
      `${plan.name} (${plan.playbook}): company ${plan.company}, ${plan.inventory.environments} environments, ${plan.inventory.themes} themes in the listing${otherKindsRead(plan)}`,
    ),
  );
  lines.push('');
  lines.push(
    table(
      ['#', 'task', 'action', 'targets', 'calls', 'skipped', 'guards'],
      plan.tasks.map((t) => [t.index + 1, t.name, t.action, t.matched, t.steps, t.skipped, guardsOf(t)]),
    ),
  );
  for (const t of plan.tasks.filter((t) => t.health?.on_broken !== undefined))
    lines.push(paint('yellow', `note: task "${terminalName(t.name)}" restores a site its write broke: ${restoreFrom.warning}`));
  const empty = plan.tasks.filter((t) => t.matched === 0);
  for (const t of empty)
    lines.push(paint(t.allow_empty ? 'dim' : 'yellow', `note: task "${t.name}" selects no ${noun(t.action)}${t.allow_empty ? ' (allow_empty)' : ''}`));
  const total = plan.steps.length;
  lines.push('');
  lines.push(
    `${total} call${total === 1 ? '' : 's'} would be sent (${plan.steps.filter((s) => !s.idempotent).length} of them create something and are never sent twice), ${plan.skipped.length} target${plan.skipped.length === 1 ? '' : 's'} skipped.`,
  );
  lines.push(...releaseAgeLines([...plan.steps, ...plan.skipped], now).map(terminalMessage));
  lines.push(...stagingLines([...plan.steps, ...plan.skipped]).map(terminalMessage));
  lines.push(...withheldLines([...plan.steps, ...plan.skipped]).map(terminalMessage));
  const clears = new Map(plan.tasks.map((t) => [t.index, t.health !== undefined && clearsCache(t.health)]));
  const guardedWrites = plan.steps.filter((s) => stepHealthUrl(s) !== undefined && clears.get(s.task_index));
  const clearing = guardedWrites.length;
  const guards = guardCount(guardedWrites);
  if (clearing > 0 && guards === clearing)
    lines.push(`and after each of ${clearing} guarded write${clearing === 1 ? '' : 's'}, before the check after it: ${CLEAR_CACHE} (health.clear_cache).`);
  else if (clearing > 0)
    lines.push(
      `and ${guards} time${guards === 1 ? '' : 's'} after ${clearing} guarded writes (one guard an environment: its writes go one after another, then one clear and one check after all of them): ${CLEAR_CACHE} (health.clear_cache).`,
    );
  if (verbose) {
    lines.push('');
    for (const s of plan.steps) {
      const check = s.health
        ? 'url' in s.health
          ? `  # health: ${healthNote(s.health.url, clears.get(s.task_index), s)}`
          : `  # fails unsent: ${s.health.missing}`
        : '';
      const backup = s.role === 'backup' ? '  # restore point first; the write waits for it' : '';
      lines.push(
        `${forTerminal(`${s.method} ${s.path}${s.body === undefined ? '' : ` ${JSON.stringify(s.body)}`}`)}${s.note ? paint('dim', `  # ${s.note}`) : ''}${check || backup ? paint('dim', forTerminal(check || backup)) : ''}`,
      );
    }
    for (const s of plan.skipped)
      lines.push(
        paint(
          'dim',
          `skip ${terminalName(`${s.target.site ?? ''}/${s.target.environment ?? ''}${s.target.domain ? ` ${s.target.domain}` : ''}`)} (${s.task}): ${terminalMessage(s.reason)}`,
        ),
      );
  }
  return lines.join('\n');
}

/** The cache clear a guarded write is followed by (health.clear_cache), as sent. */
const CLEAR_CACHE = `${ENDPOINTS.clearCache.method} ${ENDPOINTS.clearCache.path} {"environment_id": ENV}`;

/** What a guarded write's check does: GET before and after, and the cache cleared between the write and the look after. */
function healthNote(url: string, clears: boolean | undefined, step: Step): string {
  if (!clears) return `GET ${url} before and after`;
  const env = step.target.env_id ?? step.lock ?? '';
  return `GET ${url} before; after the write ${CLEAR_CACHE.replace('ENV', JSON.stringify(env))}, then GET ${url}`;
}

/** A task's guards in a few words: `backup, health`. */
function guardsOf(t: Plan['tasks'][number]): string {
  return (
    [
      t.backup_first ? 'backup' : '',
      t.health ? 'health' : '',
      t.health?.on_broken ? `on broken: ${t.health.on_broken}` : '',
      t.health && clearsCache(t.health) ? 'cache clear' : '',
    ]
      .filter(Boolean)
      .join(', ') || '-'
  );
}

/** What the next command is for, in the words of the summary: chosen by its kind, never by reading its words back. */
function adviceFor(kind: NextCommand['kind'], report: Report): string {
  const neverAccepted = report.results.filter((r) => r.step_id !== null && r.status === 'skipped').length;
  const running = report.results.filter((r) => r.status === 'accepted').length;
  if (kind === 'restore') return 'restores were accepted and not seen to finish; follow them (sending nothing again) with';
  if (kind === 'status') return `${running} operations were accepted and may still be running; follow them with`;
  const cut = report.results.filter((r) => r.isolation?.outcome === 'isolating' || r.held?.code === 'not_looked').length;
  if (cut > 0) {
    const allow = report.stopped?.kind === 'budget' ? ' (--max-failures allows the failures seen so far, so new writes stop again at the next one)' : '';
    const unsent = neverAccepted > 0 ? `, then send the ${neverAccepted} steps not sent` : '';
    return `${cut} writes were left before their lives ended (a look after, isolation rounds); finish them first${unsent}${allow} with`;
  }
  if (report.stopped?.kind === 'window') return `${neverAccepted} steps were not sent before the window closed; send them in the next window with`;
  if (report.stopped?.kind === 'budget')
    return `${neverAccepted} steps were not sent; once the failures above are looked at, send them (stopping at the next failure) with`;
  return `${neverAccepted} steps were never accepted by the service; send them with`;
}

export function renderSummary(report: Report, reportPath: string, paint: Painter = plain): string {
  const s = report.summary;
  const lines: string[] = [];
  const perTask = taskCounts(report.results);
  const rows = perTask.map(({ task, counts: c }) => {
    const targets = Object.values(c).reduce((a, b) => a + b, 0);
    return [task, targets, c.accepted + c.succeeded, c.failed, c.held, c.unknown, c.skipped, c.planned];
  });
  lines.push(table(['task', 'targets', 'ok', 'failed', 'held', 'unknown', 'skipped', 'planned'], rows));
  const problems = problemSites(report);
  for (const site of problems.slice(0, 10)) {
    const r = site.lead;
    lines.push(
      paint(
        r.status === 'failed' ? 'red' : 'yellow',
        `${r.status} ${terminalName(targetLabel(r))} (${r.task}): ${terminalMessage(siteText(site, MESSAGE_WIDTH))}`,
      ),
    );
  }
  if (problems.length > 10) lines.push(`… and ${problems.length - 10} more sites in the report`);
  // What the run changed, before why it left the rest alone (report/changed.ts).
  const changed = changedLines(report, SHOWN_CHANGES);
  lines.push(...changed.lines.map((line) => `updated: ${terminalMessage(line)}`), ...(changed.more > 0 ? [moreChangedLine(changed.more)] : []));
  lines.push(...reasonLines(report));
  for (const { task } of perTask) {
    const counts = healthCounts(report.results.filter((r) => groupOf(r) === task));
    if (counts) lines.push(`health (${terminalName(task)}): ${counts}`);
  }
  for (const { task, text } of databaseLines(report.results)) lines.push(`database (${terminalName(task)}): ${terminalMessage(text)}`);
  const slots = backupSlotsSummary(report.results);
  if (slots) lines.push(`manual backups: ${slots}`);
  lines.push(...answerLines(report).map(terminalMessage));
  const unseen = pagesNotLookedAt(report);
  if (unseen) lines.push(paint('yellow', unseen));
  const noCache = cacheNotAvailableLine(report);
  if (noCache) lines.push(paint('yellow', terminalMessage(noCache)));
  for (const line of nothingSeenLines(report)) lines.push(paint('red', clip(forTerminal(line), 2 * MESSAGE_WIDTH)));
  const before = unhealthyBefore(report);
  for (const r of before.slice(0, 10))
    lines.push(
      paint(
        'yellow',
        `broken before its write (not blamed) ${terminalName(targetLabel(r))}: ${terminalMessage(`${r.health!.before ?? ''} at ${r.health!.url}`)}`,
      ),
    );
  if (before.length > 10) lines.push(`… and ${before.length - 10} more sites broken before their write, in the report`);
  if (report.stopped) lines.push(paint('red', `${report.stopped.kind === 'window' ? 'window closed' : 'run stopped'}: ${report.stopped.reason}`));
  const ok = s.accepted + s.succeeded;
  const headline = `${report.mode === 'dry-run' ? 'dry run: ' : ''}${s.total} steps: ${ok} ok (${s.accepted} accepted, ${s.succeeded} succeeded), ${s.failed} failed, ${s.held} held, ${s.unknown} unknown, ${s.skipped} skipped${s.planned ? `, ${s.planned} planned` : ''}`;
  lines.push(paint(problemCount(s) > 0 || report.stopped ? 'red' : 'green', headline));
  lines.push(`report: ${reportPath}`);
  const next = nextCommand(report, reportPath);
  if (next) lines.push(`${adviceFor(next.kind, report)}: ${commandText(next)}`);
  // One line per site: the writes a restore took back with it are that site's, not sites of their own.
  const restore = bySite(restorePointsOfFailures(report)).map((g) => g.lead);
  const restored = restore.filter((r) => r.restored).length;
  if (restore.length > 0)
    lines.push(
      restored > 0
        ? `the ${restore.length} failed site${restore.length === 1 ? '' : 's'} (${restored} restore${restored === 1 ? '' : 's'} asked for):`
        : `restore points of the ${restore.length} failed site${restore.length === 1 ? '' : 's'}:`,
    );
  for (const r of restore) lines.push(`  ${terminalName(targetLabel(r))} (${terminalName(r.task)}): ${terminalMessage(restoreLine(r))}`);
  lines.push(...isolatedLines(report, next && commandText(next)));
  lines.push(...quarantinedLine(report));
  return lines.join('\n');
}

/** Each site `health.on_broken: isolate` took apart (or whose error log named an item): what broke it, what was kept, what is left. */
function isolatedLines(report: Report, next: string | undefined): string[] {
  const isolated = isolatedResults(report.results);
  if (isolated.length === 0) return [];
  return [
    `isolated (${isolated.length} site${isolated.length === 1 ? '' : 's'}):`,
    ...isolated.map(
      (r) => `  ${terminalName(targetLabel(r))} (${terminalName(r.task)}): ${clip(forTerminal(isolationLine(r, next) ?? ''), 2 * MESSAGE_WIDTH)}`,
    ),
  ];
}

/**
 * The versions the run found to break a site (its report's `quarantined`; a report that does not say:
 * isolation's culprits), which the company's quarantine now keeps from every later run: what a person
 * asks next is how to send one again.
 */
function quarantinedLine(report: Report): string[] {
  const culprits = () =>
    isolatedResults(report.results).flatMap((r) => (r.isolation?.culprits ?? []).flatMap((c) => (itemOf(c) ? [{ ...itemOf(c)!, version: c.to }] : [])));
  const found = new Map<string, { kind: Kind; name: string; version: string }>();
  for (const q of report.quarantined ?? culprits()) found.set(JSON.stringify([q.kind, q.name, versionKey(q.version)]), q);
  const all = [...found.values()];
  if (all.length === 0) return [];
  const first = all[0]!;
  return [
    `quarantined, sent by no later run of the company until released (sitefleet quarantine list): ${all.map((c) => terminalName(`${c.name}@${c.version}`)).join(', ')}; ` +
      `to send one again: ${terminalName(`sitefleet quarantine release ${first.name}@${first.version} --kind ${first.kind}`)}`,
  ];
}

export function renderInventory(inventory: Inventory, format: 'table' | 'json' | 'csv'): string {
  // A site id column once a sites map is given (the listing has none).
  const withSiteIds = inventory.environments.some((e) => e.site_id !== undefined);
  if (format === 'json') return jsonText(inventory, 2);
  const rows = inventory.environments.flatMap((env) =>
    KINDS.flatMap((kind) =>
      installedOf(env, kind).map((t) => [
        env.site,
        ...(withSiteIds ? [env.site_id ?? ''] : []),
        env.name,
        env.id,
        kind,
        t.name,
        t.status,
        t.version,
        t.update_available ? t.update_version : '',
        t.update_available && t.update_vulnerable ? 'yes' : '',
        t.version_vulnerable ? 'yes' : '',
      ]),
    ),
  );
  const header = [
    'site',
    ...(withSiteIds ? ['site_id'] : []),
    'environment',
    'env_id',
    'kind',
    'name',
    'status',
    'version',
    'update',
    'update_vulnerable',
    'version_vulnerable',
  ];
  if (format === 'csv') return [header, ...rows].map((r) => r.map(forCsv).join(',')).join('\n');
  const count = (kind: Kind) => inventory.environments.reduce((n, e) => n + installedOf(e, kind).length, 0);
  const installs = KINDS.filter((kind) => inventory.listed[kind]).map((kind) =>
    KIND_TABLE[kind].only === undefined ? `${count(kind)} installed ${KIND_TABLE[kind].plural}` : `${count(kind)} with their WordPress version`,
  );
  const updates = rows.filter((r) => r.at(-3) !== '').length;
  const from = KINDS.flatMap((kind) => {
    const { from_environments: each, unavailable } = inventory.listed[kind] ?? {};
    if (unavailable) return [`\nno ${KIND_TABLE[kind].plural} shown: ${terminalMessage(unavailable)}`];
    return each ? [`\n${KIND_TABLE[kind].plural} read from each environment's own listing: ${terminalMessage(each)}`] : [];
  });
  return `${table(header, rows)}\n\n${inventory.environments.length} environments, ${installs.join(', ')}, ${updates} updates available${from.join('')}`;
}

/** Updated items the summary names (the run's page lists every one, with its sites). */
const SHOWN_CHANGES = 10;

/** Reasons shown per task in the summary, most frequent first; the report holds every one. */
const SHOWN_REASONS = 5;

/**
 * Why the plan skipped targets or left part of their work: per task, its most frequent reasons with
 * their counts. A reason given once (a domain's own name in it) is shown only when the task has few.
 */
function reasonLines(report: Report): string[] {
  const reasons = planReasons(report);
  const lines: string[] = [];
  for (const task of new Set(reasons.map((r) => r.task))) {
    const mine = reasons.filter((r) => r.task === task);
    const shown = (mine.length <= SHOWN_REASONS ? mine : mine.filter((r) => r.count > 1)).slice(0, SHOWN_REASONS);
    const nouns = (n: number) => `${n} ${targetNounOf(report, task)}${n === 1 ? '' : 's'}`;
    for (const r of shown) lines.push(`why (${terminalName(task)}), ${nouns(r.count)}: ${terminalMessage(r.reason)}`);
    const rest = mine.slice(shown.length);
    if (rest.length > 0)
      lines.push(
        `why (${terminalName(task)}): ${rest.length} ${shown.length > 0 ? 'other ' : ''}reasons for ${nouns(rest.reduce((n, r) => n + r.count, 0))}, in the report`,
      );
  }
  return lines;
}

/** What a task's targets are, in a word: `environment`, `domain`. */
function targetNounOf(report: Report, task: string): string {
  return noun(report.results.find((r) => r.task === task)!.action);
}
