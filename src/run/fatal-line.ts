import { KIND_TABLE, refOf, type KindRow } from '../inventory/kinds.js';
import { maskSecretText } from '../util/secret-mask.js';
import type { LoggedError } from './types.js';

/**
 * Reading a site's PHP error log for the item that broke it: pure, no I/O. The log is the service's
 * text (and, inside it, whatever a plugin chose to print): every line is data, matched, never
 * interpreted, and only a plausible slug is taken from it.
 */

/** The most characters of a log line a record keeps (schemas/records.schema.json, `logged.line`). */
export const LOGGED_LINE_MAX = 500;

/** A line that says PHP stopped: `PHP Fatal error: …`, or an uncaught error or exception however it was logged. */
const FATAL = /\bPHP Fatal error\b|\bUncaught\s+[\w\\]*(Error|Exception)\b/;

/** An item's folder name as WordPress.org slugs are written: anything else in a log is not taken as one. */
const PLAUSIBLE_SLUG = /^[a-z0-9._-]{1,200}$/;

/** The fatal error lines of a log's text, in order (a log may end its lines with CRLF). */
export function fatalLines(text: string): string[] {
  return text.split(/\r?\n/).filter((line) => FATAL.test(line));
}

/**
 * The fatal error lines in `after` that are not in `before`. Both are a log's last N lines, so the
 * same line sits at another offset in each, and old lines fall off the front: a line is old when
 * `before` holds the same text (PHP stamps each line with its second, so a repeated error is a new
 * line). Without `before` (it could not be read) every fatal line of `after` counts.
 */
export function newFatalLines(before: string | undefined, after: string): string[] {
  const old = new Set(before === undefined ? [] : before.split(/\r?\n/));
  return fatalLines(after).filter((line) => !old.has(line));
}

/**
 * The item a line's path names: the earliest `<codePath><slug>/` of any kind (`wp-content/plugins/akismet/`),
 * or a kind with one item (WordPress: `wp-includes/`) by its path alone. A folder name that is not a
 * plausible slug names nothing.
 */
export function namedItem(line: string, kinds: readonly KindRow[]): LoggedError | undefined {
  let best: { at: number; logged: LoggedError } | undefined;
  for (const row of kinds) {
    const at = itemAt(line, row);
    if (at && (!best || at.at < best.at)) best = { at: at.at, logged: { ...refOf(row.kind, at.name), line: loggedLine(line) } };
  }
  return best?.logged;
}

/**
 * What the log says broke the site: of the fatal lines new since `before`, the first that names an
 * item of `kinds` (without `before`, the newest: older lines may be from before the write). Undefined
 * when none does.
 */
export function newFatal(before: string | undefined, after: string, kinds: readonly KindRow[]): LoggedError | undefined {
  const lines = newFatalLines(before, after);
  if (before === undefined) lines.reverse();
  for (const line of lines) {
    const named = namedItem(line, kinds);
    if (named) return named;
  }
  return undefined;
}

/**
 * Secret-looking parts of a log line masked before it is kept: the line goes into the report and the
 * pages (0644), the client's record, Slack, webhooks and the quarantine's `why`, while a fatal error
 * may quote a failed request's URL, a connection's settings or a cookie. The rules are
 * src/util/secret-mask.ts's (with the token shapes of gitleaks'); here, the item paths the line names
 * (`/wp-content/plugins/<slug>/`, `/wp-includes/`) are kept as they are, so that the masked line
 * still says where PHP stopped: the text between them is masked piece by piece.
 */
export function maskSecrets(line: string): string {
  let out = '';
  let from = 0;
  for (const path of line.matchAll(ITEM_PATH)) {
    out += maskSecretText(line.slice(from, path.index)) + path[0];
    from = path.index + path[0].length;
  }
  return out + maskSecretText(line.slice(from));
}

/** The line as a record keeps it: masked whole first, then cut, so that no cut leaves part of a secret a rule would have known whole. */
export function loggedLine(line: string): string {
  return cutLine(maskSecrets(line));
}

/** An item's path as itemAt reads it, with the `/` before it: any kind's, whether or not it is asked about. */
const ITEM_PATH = new RegExp(
  `(?:/|(?<![\\w.-]))(?:${Object.values(KIND_TABLE)
    .map((row) => row.filesPattern('[a-z0-9._-]{1,200}'))
    .join('|')})`,
  'g',
);

/** The line cut to LOGGED_LINE_MAX characters, counted as JSON Schema counts them (code points), never splitting a pair. */
export function cutLine(line: string): string {
  const points = Array.from(line);
  return points.length <= LOGGED_LINE_MAX ? line : points.slice(0, LOGGED_LINE_MAX).join('');
}

function itemAt(line: string, row: KindRow): { at: number; name: string } | undefined {
  // A path segment: not the tail of a longer name (`my-wp-content/…`).
  const pattern = new RegExp(`(?<![\\w.-])${row.filesPattern('([^/\\s]*)')}`, 'g');
  for (const match of line.matchAll(pattern)) {
    // A kind with one item (WordPress) has no folder of its own to read a name from.
    if (match[1] === undefined) return { at: match.index, name: row.only! };
    const slug = match[1];
    if (PLAUSIBLE_SLUG.test(slug) && slug !== '.' && slug !== '..') return { at: match.index, name: slug };
  }
  return undefined;
}
