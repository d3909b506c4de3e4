import type { ItemChange } from '../actions/action.js';
import { ACTIONS } from '../actions/index.js';
import { writtenUpdates } from '../actions/items-update.js';
import { itemOf, KINDS, type Kind } from '../inventory/kinds.js';
import { versionKey } from '../util/item-version.js';
import { isolationFacts } from './isolation-lines.js';
import { targetLabel, type Report, type ReportResult } from './report.js';

/**
 * What a run changed on the fleet, item by item (issue 56): the updates that stand as done, grouped
 * by item and versions (`jetpack 3.0.0 → 3.0.4 on 120 sites`), for the terminal summary, the Markdown
 * summary, the run's page, Slack and the monthly record alike. Pure: the report in, the groups out.
 * The names and versions are the service's text; each sink passes them through its own safe-text rule.
 *
 * An update stands when its write succeeded and nothing the run did took it back:
 *
 * | the write                                     | what stands                                   |
 * | --------------------------------------------- | --------------------------------------------- |
 * | succeeded                                     | its updates, at the versions read back        |
 * | isolated (health.on_broken: isolate)          | the updates kept (sent again, site healthy)   |
 * | restored, put back by its files, undone       | nothing                                       |
 * | failed, not_updated, held, unknown, accepted  | nothing                                       |
 * | a restore point's step, a target skipped      | nothing                                       |
 *
 * and never an update isolation found to break the environment, nor a version the run quarantined
 * there, whichever of the environment's writes carried it.
 */
export interface ChangedGroup {
  kind: Kind;
  name: string;
  from: string;
  to: string;
  /** Where it stands, each once, sorted: `site/environment` (targetLabel). */
  where: string[];
  /** How many distinct sites those are. */
  sites: number;
}

/** One update that stands on one environment. */
export interface StoodChange {
  kind: Kind;
  name: string;
  from: string;
  to: string;
}

/** The updates a result's write left standing, before what the rest of its run took back (see `changedIn`). */
function ownChanges(r: ReportResult): StoodChange[] {
  const kind = r.step_id !== null && r.role !== 'backup' ? ACTIONS.get(r.action)?.items : undefined;
  if (!kind) return [];
  // Isolation's kept updates went in again in rounds that left the site healthy, whatever the step's status says of its culprit.
  if (r.isolation) return isolationFacts(r.isolation).kept.flatMap(stood);
  const undone = r.restored !== undefined || r.undone?.status === 'succeeded' || r.undone?.status === 'sending';
  if (r.status !== 'succeeded' || undone) return [];
  const stays = new Set((r.failure?.stays ?? []).map((s) => s.name));
  const runs = new Map((r.runs ?? []).map((v) => [v.name, v.version]));
  const written = writtenUpdates(kind, { body: r.request?.body, ...(r.precondition !== undefined && { precondition: r.precondition }) });
  // The version read back is what the environment runs (a bulk update installs the newest there is).
  return written
    .flatMap(stood)
    .filter((c) => !stays.has(c.name))
    .map((c) => ({ ...c, to: runs.get(c.name) ?? c.to }))
    .filter((c) => c.from === '' || versionKey(c.from) !== versionKey(c.to));
}

function stood(c: ItemChange): StoodChange[] {
  const item = itemOf(c);
  return item ? [{ kind: item.kind, name: item.name, from: c.from, to: c.to }] : [];
}

/** An environment, by its id (a target without one: by its words). */
function envKey(r: Pick<ReportResult, 'target'>): string {
  return r.target.env_id ?? targetLabel(r);
}

/** Per environment of the run: the items it must not be said to run the new version of (isolation's culprits, the run's quarantine). */
function takenBack(report: Report): Map<string, Set<string>> {
  const out = new Map<string, Set<string>>();
  const add = (env: string, kind: Kind, name: string, version: string) => {
    const set = out.get(env) ?? new Set<string>();
    out.set(env, set);
    set.add(JSON.stringify([kind, name, versionKey(version)]));
  };
  for (const r of report.results) for (const c of (r.isolation?.culprits ?? []).flatMap(stood)) add(envKey(r), c.kind, c.name, c.to);
  for (const q of report.quarantined ?? []) add(q.env_id, q.kind, q.name, q.version);
  return out;
}

/** The updates that stand from one result of a report (what the monthly record lists for its step). */
export function changedIn(report: Report): (r: ReportResult) => StoodChange[] {
  const back = takenBack(report);
  return (r) => {
    const gone = back.get(envKey(r));
    return ownChanges(r).filter((c) => !gone?.has(JSON.stringify([c.kind, c.name, versionKey(c.to)])));
  };
}

/** Every update that stands after the run, grouped by item and versions: kinds in their order, then the most widespread first. */
export function changedGroups(report: Report): ChangedGroup[] {
  const changes = changedIn(report);
  const groups = new Map<string, { change: StoodChange; where: Set<string>; sites: Set<string> }>();
  for (const r of report.results)
    for (const c of changes(r)) {
      const key = JSON.stringify([c.kind, c.name, c.from, c.to]);
      const group = groups.get(key) ?? { change: c, where: new Set<string>(), sites: new Set<string>() };
      groups.set(key, group);
      group.where.add(targetLabel(r));
      group.sites.add(r.target.site ?? r.target.env_id ?? '');
    }
  return [...groups.values()]
    .map(({ change, where, sites }) => ({ ...change, where: [...where].sort(), sites: sites.size }))
    .sort((a, b) => KINDS.indexOf(a.kind) - KINDS.indexOf(b.kind) || b.where.length - a.where.length || compare(a.name, b.name) || compare(a.to, b.to));
}

function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** `jetpack 3.0.0 → 3.0.4 on 120 sites` (`… on 3 sites, 4 environments` where a site had more than one); plain text of the service's names. */
export function changedLine(g: Pick<ChangedGroup, 'name' | 'from' | 'to' | 'where' | 'sites'>): string {
  const envs = g.where.length > g.sites ? `, ${g.where.length} environments` : '';
  return `${changeWords(g)} on ${g.sites} site${g.sites === 1 ? '' : 's'}${envs}`;
}

/** `jetpack 3.0.0 → 3.0.4`. */
export function changeWords(c: Pick<StoodChange, 'name' | 'from' | 'to'>): string {
  return c.from === '' ? `${c.name} → ${c.to}` : `${c.name} ${c.from} → ${c.to}`;
}

/**
 * The run's changes as lines of plain text, at most `most` of them, and how many groups more: what the
 * terminal, Markdown and Slack summaries list under "updated" (each through its own safe-text rule).
 */
export function changedLines(report: Report, most: number): { lines: string[]; more: number } {
  const groups = changedGroups(report);
  return { lines: groups.slice(0, most).map(changedLine), more: Math.max(0, groups.length - most) };
}

/** `… and 3 more updated items, on the run's page`: the line after the ones a summary names. */
export function moreChangedLine(more: number): string {
  return `… and ${more} more updated item${more === 1 ? '' : 's'}, on the run's page (--html)`;
}
