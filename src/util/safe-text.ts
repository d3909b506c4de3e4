/**
 * Text from the service (site and environment names, messages, SSH fields, backup names) is typed
 * by whoever may create or rename a site, and passes proxies we do not control. It reaches each sink
 * only through this module, which knows what that sink executes or chokes on. JSON outputs are the
 * exception: they keep every string exactly (see `jsonText`).
 */

/**
 * Characters no sink shows as themselves: C0 controls (ESC starts terminal sequences, BEL ends a
 * title change, line breaks forge lines), DEL, C1 controls (U+009B is an 8-bit CSI), lone surrogates,
 * the bidirectional overrides and isolates that reorder what a reader sees (a "Trojan Source"
 * name), line and paragraph separators, and the two non-characters XML refuses.
 */
const BEYOND_C0 = '\\u007f-\\u009f\\u061c\\u200e\\u200f\\u2028-\\u202e\\u2066-\\u2069\\ufffe\\uffff';
const LONE_SURROGATE = '[\\ud800-\\udbff](?![\\udc00-\\udfff])|(?<![\\ud800-\\udbff])[\\udc00-\\udfff]';
const UNSAFE = new RegExp(`[\\u0000-\\u001f${BEYOND_C0}]|${LONE_SURROGATE}`, 'g');
/** The unsafe characters `JSON.stringify` writes as they are (it escapes C0 and lone surrogates itself). */
const LEFT_BY_STRINGIFY = new RegExp(`[${BEYOND_C0}]`, 'g');

const NAMED: Record<string, string> = { '\n': '\\n', '\r': '\\r', '\t': '\\t' };

/** A character written as a reader can see it: `\n`, `\x1b`, `\u202e`. */
function shown(c: string): string {
  const code = c.charCodeAt(0);
  return NAMED[c] ?? (code <= 0xff ? `\\x${code.toString(16).padStart(2, '0')}` : `\\u${code.toString(16).padStart(4, '0')}`);
}

/** Unsafe characters shown escaped, except those in `keep` (which the sink encodes its own way). */
function escapeUnsafe(text: string, keep = ''): string {
  return text.replace(UNSAFE, (c) => (keep.includes(c) ? c : shown(c)));
}

/**
 * For a terminal, a log line read by a person, or any plain text: every unsafe character shown
 * escaped, so it is one line that changes nothing on the screen. A leading `::` is escaped too: a CI
 * runner (GitHub Actions) takes a line that starts with it as a command. Idempotent: the tool's own
 * colours are added after this (`paint`), never passed through it.
 */
export function forTerminal(text: string): string {
  return escapeUnsafe(text).replace(/^(\s*):(?=:)/, '$1\\x3a');
}

/** The widest a name gets in a line a person reads (a table cell, a summary, an annotation); JSON and CSV carry all of it. */
export const NAME_WIDTH = 60;
/** The most of a service message such a line shows; the report holds all of it. */
export const MESSAGE_WIDTH = 300;

/** At most `max` characters, the cut marked: one very long name must not pad every row of a table. */
export function clip(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max - 1)}…`;
}

/** A name in a line a person reads (a table cell, a summary line, a warning): safe, and clipped. */
export function terminalName(text: string): string {
  return clip(forTerminal(text), NAME_WIDTH);
}

/** What the service said, in a line a person reads: safe, and clipped (the report holds all of it). */
export function terminalMessage(text: string): string {
  return clip(forTerminal(text), MESSAGE_WIDTH);
}

/**
 * A cell a spreadsheet would run as a formula starts with one of these (OWASP "CSV injection"); a
 * line that starts with `::` is a command to a CI runner when the CSV is printed in a job's log.
 */
const FORMULA_START = /^([=+\-@\t\r]|::)/;
const PLAIN_NUMBER = /^[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?$/;

/**
 * One RFC 4180 field. A text cell that a spreadsheet would evaluate (or a CI log run) gets a leading
 * `'` (it then shows as text); numbers stay numbers, including a negative one. Unsafe characters,
 * line breaks and tabs included, are shown escaped as on a terminal: every row is one line, so a CSV
 * printed to a terminal or a job's log cannot forge a line. The JSON format has the exact text.
 */
export function forCsv(value: string | number): string {
  if (typeof value === 'number') return String(value);
  let text = escapeUnsafe(value);
  if (FORMULA_START.test(text) && !PLAIN_NUMBER.test(text)) text = `'${text}`;
  return /[",]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text; // line breaks are escaped already
}

const XML_ENTITIES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&apos;' };

/**
 * Text or attribute content for XML 1.0: characters it forbids even as references (most C0
 * controls, lone surrogates, U+FFFE/U+FFFF) are replaced by their escaped form, as are the other
 * unsafe ones; then markup is escaped. Tab and line breaks become character references, which
 * attribute values would otherwise lose to normalisation.
 */
export function forXml(text: string): string {
  return escapeUnsafe(text, '\t\n\r').replace(/[&<>"'\t\n\r]/g, (c) => XML_ENTITIES[c] ?? `&#${c.charCodeAt(0)};`);
}

const HTML_ENTITIES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

/**
 * Text or a quoted attribute value in an HTML page: every unsafe character shown escaped as on a
 * terminal (a page is printed, mailed and archived; a name must not reorder or hide what a reader
 * sees), then the five characters that could end a text node or an attribute written as entities.
 * The result never holds `<`, `&` that starts anything but an entity, or a quote: a name cannot open
 * a tag, close its attribute or hide in a comment. Every attribute it fills is quoted (`"…"`).
 */
export function forHtml(text: string): string {
  return escapeUnsafe(text).replace(/[&<>"']/g, (c) => HTML_ENTITIES[c]!);
}

/**
 * Text for a `<pre>` block (what a command printed): line breaks and tabs kept as they are, every
 * other character as `forHtml` has it, so a page shows `wp plugin list` as the table it is.
 */
export function forHtmlBlock(text: string): string {
  return text
    .split(/(\r?\n|\t)/)
    .map((part, i) => (i % 2 === 1 ? part.replace('\r', '') : forHtml(part)))
    .join('');
}

/**
 * A Markdown table cell or list item (GitHub job summaries): unsafe characters shown escaped, and
 * every character Markdown or its inline HTML gives a meaning backslash-escaped, so a name cannot
 * close the cell, open a link or an image, or inject a tag.
 */
export function forMarkdown(text: string): string {
  return escapeUnsafe(text).replace(/[\\`*_{}[\]()<>#+!|~&]/g, '\\$&');
}

/**
 * Text in a Slack message (mrkdwn, also read by Slack-compatible chats): unsafe characters shown
 * escaped, then the three characters Slack asks to be encoded, so a name cannot open a link or a
 * mention (`<!channel>`); the formatting characters become their full-width look-alikes, so a
 * name cannot bold or strike the rest of the line.
 */
export function forSlack(text: string): string {
  return escapeUnsafe(text)
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/[*_~`]/g, (c) => String.fromCharCode(c.charCodeAt(0) + 0xfee0));
}

/**
 * A label value in Prometheus' text format: backslash, double quote and line feed escaped as the
 * format asks; the other unsafe characters shown escaped first (their backslash escaped in turn), so
 * a metrics file printed to a terminal changes nothing on the screen.
 */
export function forPrometheusLabel(text: string): string {
  return escapeUnsafe(text, '\n').replace(/[\\"\n]/g, (c) => (c === '\n' ? '\\n' : `\\${c}`));
}

/**
 * The message of a GitHub Actions workflow command (`::error::MESSAGE`): shown as on a terminal
 * (GitHub's log renders escape sequences), then `%`, CR and LF encoded as the runner expects.
 */
export function forAnnotation(text: string): string {
  return forTerminal(text).replace(/%/g, '%25').replace(/\r/g, '%0D').replace(/\n/g, '%0A');
}

/** A property of a workflow command (`title=…`): as a message, and `:` and `,` encoded too. */
export function forAnnotationProperty(text: string): string {
  return forAnnotation(text).replace(/:/g, '%3A').replace(/,/g, '%2C');
}

/** Why an SSH config value from the service is not written, or undefined when it is a plain token. */
export type SshField = 'HostName' | 'Port' | 'User';
const SSH_TOKEN: Record<SshField, RegExp> = {
  // A host name, an IPv4 or an IPv6 address; no leading dash, which ssh would read as an option.
  HostName: /^[A-Za-z0-9_.:](?:[A-Za-z0-9_.:-]{0,252})$/,
  Port: /^[0-9]{1,5}$/,
  User: /^[A-Za-z0-9_.@+](?:[A-Za-z0-9_.@+-]{0,127})$/,
};

/**
 * An SSH config value as a plain token, or why it is refused. ssh_config splits on whitespace and
 * `=`, honours quotes, and takes every line as a directive: a value with a line break and
 * `ProxyCommand` would run a command the next time anyone connects. Nothing from the service is
 * quoted or repaired into a config; it is written as it is or not at all.
 */
export function sshToken(field: SshField, value: unknown): { value: string } | { refused: string } {
  const text = typeof value === 'number' ? String(value) : value;
  if (typeof text !== 'string' || text === '') return { refused: `no ${field}` };
  if (!SSH_TOKEN[field].test(text) || (field === 'Port' && Number(text) > 65535))
    return { refused: `${field} "${terminalName(text)}" is not a plain ${field === 'Port' ? 'port number' : 'token'}` };
  return { value: text };
}

/**
 * JSON for stdout and files: `JSON.stringify`, then the unsafe characters it leaves as they are
 * (DEL, C1, the bidirectional controls, the separators) written as `\u` escapes. Parsed, every string
 * is exactly what the service sent; printed, nothing acts on the terminal. Outside strings, JSON
 * has only ASCII, so the replacement cannot touch its structure.
 */
export function jsonText(value: unknown, indent?: number): string {
  return JSON.stringify(value, null, indent).replace(LEFT_BY_STRINGIFY, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

/** A path as a shell would need it typed in a command sitefleet offers: bare when it is plain, else in single quotes. */
export function shellQuote(text: string): string {
  return /^[\w@%+=:,./-]+$/.test(text) ? text : `'${text.replace(/'/g, `'\\''`)}'`;
}
