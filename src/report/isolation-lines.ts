import type { ItemChange } from '../actions/action.js';
import { itemOf } from '../inventory/kinds.js';
import { undidTheWrite } from '../run/life/isolation.js';
import type { Isolation, LoggedError } from '../run/types.js';
import { clip } from '../util/safe-text.js';
import type { ReportResult } from './report.js';

/**
 * What `health.on_broken: isolate` did to a site, in the words every sink shows (the terminal, the
 * Markdown summary, the run's page, Slack, the webhook, the monthly record). These are plain text
 * holding the service's words (the error log's line): each sink passes them through its own safe-text
 * function, as it does the restore line; the JSON outputs carry the records themselves.
 */

/** The most items a line names before it counts the rest. */
const NAMED = 5;
/** The most of a log line a line quotes (the record keeps 500 characters of it, the JSON outputs all of those). */
const QUOTED = 200;

/** The results a run's outputs list as isolated: those that carry an isolation or a logged error (never a restore point's step). */
export function isolatedResults(results: readonly ReportResult[]): ReportResult[] {
  return results.filter((r) => r.role !== 'backup' && (r.isolation !== undefined || r.logged !== undefined));
}

/** `akismet 5.3 → 5.4`. */
export function changeText(change: ItemChange): string {
  return `${itemOf(change)?.name ?? ''} ${change.from} → ${change.to}`;
}

/** Changes in a few words: `a 1 → 2, b 3 → 4 and 7 more`. */
export function changesText(changes: readonly ItemChange[]): string {
  const named = changes.slice(0, NAMED).map(changeText).join(', ');
  return changes.length > NAMED ? `${named} and ${changes.length - NAMED} more` : named;
}

/** What isolation left where: the updates that broke the site, those installed, those not. */
export interface IsolationFacts {
  culprits: ItemChange[];
  /** Installed and kept: sent again in a round that left the site healthy (all of them when the breakage did not come back). */
  kept: ItemChange[];
  /** Not installed: isolation stopped (or is not done) before they were sent in a healthy round. */
  left: ItemChange[];
}

export function isolationFacts(iso: Isolation): IsolationFacts {
  const nameOf = (c: ItemChange) => itemOf(c)?.name ?? '';
  const guilty = new Set(iso.culprits.map(nameOf));
  // A round restored to the point before the write (by items, its files could not heal it) undid the rounds before it too,
  // or is undoing them while a resume follows that restore.
  const undone = iso.rounds.some(undidTheWrite);
  const sentHealthy = new Set(undone ? [] : iso.rounds.filter((r) => r.status === 'healthy').flatMap((r) => r.names));
  const left = iso.left ?? (iso.outcome === 'isolating' ? iso.updates.filter((u) => !guilty.has(nameOf(u)) && !sentHealthy.has(nameOf(u))) : []);
  const notIn = new Set(left.map(nameOf));
  return { culprits: iso.culprits, kept: iso.updates.filter((u) => !guilty.has(nameOf(u)) && !notIn.has(nameOf(u))), left };
}

/**
 * The log line in a few words: without its time stamp, the site's folder before `wp-content/` or
 * `wp-includes/` shortened to `…` (`PHP Fatal error: … in …/wp-content/plugins/akismet/akismet.php:123`).
 * Still the service's text: the sink makes it safe.
 */
export function logExcerpt(line: string): string {
  return line.replace(/^\[[^\]]{0,40}\]\s*/, '').replace(/(?:\/[^\s/]+)+\/(?=wp-content\/|wp-includes\/)/g, '…/');
}

/** The logged line that names a culprit (the write's own, or a round's), else the write's. */
export function culpritLog(iso: Isolation | undefined, logged: LoggedError | undefined): LoggedError | undefined {
  const names = new Set((iso?.culprits ?? []).map((c) => `${itemOf(c)?.kind}:${itemOf(c)?.name}`));
  const all = [logged, ...(iso?.rounds ?? []).map((r) => r.logged)].filter((l): l is LoggedError => l !== undefined);
  return all.find((l) => names.has(`${itemOf(l)?.kind}:${itemOf(l)?.name}`)) ?? logged;
}

const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? '' : 's'}`;

/**
 * Isolation stopped at a round that broke the site alone and was not put back (its restore or its
 * files did not succeed): that culprit may still be on the site.
 */
function mayStay(iso: Isolation): boolean {
  const last = iso.rounds.at(-1);
  return last?.status === 'broken' && last.names.length === 1 && (last.restored ?? last.undone)?.status !== 'succeeded';
}

/**
 * A site's isolation in one line: `isolated akismet 5.3 → 5.4 as the update that broke the site
 * (PHP Fatal error … in …/wp-content/plugins/akismet/…): akismet stays on 5.3; 11 other updates kept;
 * 3 restores`. `resume`: the command that carries on an isolation that is not done (the sink's
 * words for it). Undefined for a result with neither an isolation nor a logged error.
 */
export function isolationLine(r: { isolation?: Isolation; logged?: LoggedError }, resume?: string): string | undefined {
  const iso = r.isolation;
  const log = culpritLog(iso, r.logged);
  const logged = log ? ` (${clip(logExcerpt(log.line), QUOTED)})` : '';
  if (!iso) return log ? `the error log named ${itemOf(log)?.kind ?? 'item'} ${itemOf(log)?.name ?? ''}${logged}` : undefined;
  const { culprits, kept, left } = isolationFacts(iso);
  const restores = plural(iso.restores, 'restore');
  const keptText = (other: string) => (kept.length === 0 ? `no ${other}updates kept` : `${plural(kept.length, `${other}update`)} kept`);
  switch (iso.outcome) {
    case 'found': {
      const one = culprits.length === 1;
      const stays = culprits.map((c) => `${itemOf(c)?.name ?? ''} stays on ${c.from}`).join(', ');
      return `isolated ${changesText(culprits)} as the update${one ? '' : 's'} that broke the site${logged}: ${stays}; ${keptText('other ')}${
        left.length > 0 ? `; not installed: ${changesText(left)}` : ''
      }; ${restores}`;
    }
    case 'not reproduced':
      return `not reproduced: ${iso.updates.length === 1 ? 'the update was' : `the ${iso.updates.length} updates were`} sent again in ${plural(iso.rounds.length, 'round')} and none broke the site${logged}; ${keptText('')} (all installed); ${restores}`;
    case 'stopped':
      return `isolation stopped${iso.reason ? ` (${iso.reason})` : ''}${logged}: ${keptText('')}${
        culprits.length > 0
          ? `; found breaking it: ${changesText(culprits)} (${mayStay(iso) ? 'the way back after it did not end: it may still be installed' : 'old versions kept'})`
          : ''
      }; not installed: ${left.length > 0 ? changesText(left) : 'none'}; ${restores}`;
    case 'isolating':
      return `isolating, ${plural(iso.rounds.length, 'round')} so far${logged}: ${keptText('')}; left: ${left.length > 0 ? changesText(left) : 'none'}; ${restores}${
        resume ? `; continue with: ${resume}` : ''
      }`;
  }
}
