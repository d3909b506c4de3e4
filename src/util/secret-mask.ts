import { SECRET_NAME_WORDS, TOKEN_RULES } from './secret-rules.js';

/**
 * Secrets masked in a text written by others (a PHP error line) before it is kept or shown: by their
 * context (a value given to a name that says secret, a connection's password argument, a cookie, a
 * URL's credentials and query values, an Authorization scheme's credentials, a token in a URL's
 * path) and by their shape (secret-rules.ts, ported from gitleaks). What stays is the text around
 * them, readable: `password='[masked]'`, `Cookie: a=[masked]`, `https://[masked]@host`.
 *
 * Every rule reads the text once (a line is the service's text, of any length: no rule may take
 * quadratic time on it), and a masked value is never masked again.
 */
export const MASK = '[masked]';

export function maskSecretText(text: string): string {
  let out = text.replace(PRIVATE_KEY.pattern, MASK);
  for (const step of CONTEXT_STEPS) out = step(out);
  for (const rule of SHAPES) out = out.replace(rule.pattern, MASK);
  return out.replace(PATH_SEGMENT, (segment) => (tokenLike(segment) ? MASK : segment));
}

const PRIVATE_KEY = TOKEN_RULES.find((r) => r.id === 'private-key')!;
/** The other shapes, after the context rules (so that a named value is masked whole, its quotes kept). */
const SHAPES = TOKEN_RULES.filter((r) => r !== PRIVATE_KEY);

/** A value masked: the text from `start` to `end` becomes `masked`. */
interface Masked {
  start: number;
  end: number;
  masked: string;
}

/** Where an unquoted value ends: a space, a quote, or what separates it from the next (`,` `;` `&`, a closing bracket). */
const VALUE_END = /[\s'"`,;&)\]}<>]/;
/** Where a URL query's value ends. */
const QUERY_END = /[\s'"`&#<>]/;
/** Where a cookie's value ends. */
const COOKIE_END = /[\s'"`;,]/;

/**
 * The value that starts at `at`, masked: a quoted one whole (`'`, `"`, a backquote, or JSON's escaped `\"`),
 * its quotes kept, to the line's end when its quote never closes; else up to a character of `end`.
 */
function valueAt(text: string, at: number, end: RegExp = VALUE_END): Masked | undefined {
  if (text.startsWith(MASK, at)) return undefined;
  const quote = /^\\?["'`]/.exec(text.slice(at, at + 2))?.[0];
  if (quote) {
    const close = closingQuote(text, at + quote.length, quote);
    return close === -1 ? { start: at, end: text.length, masked: quote + MASK } : { start: at, end: close + quote.length, masked: quote + MASK + quote };
  }
  let stop = at;
  while (stop < text.length && !end.test(text[stop]!)) stop++;
  return stop === at ? undefined : { start: at, end: stop, masked: MASK };
}

/** Where `quote` closes after `from` and before `last` (a backslash escapes the next character), or -1. */
function closingQuote(text: string, from: number, quote: string, last = text.length): number {
  if (quote.length === 2) {
    const at = text.indexOf(quote, from);
    return at + quote.length > last ? -1 : at;
  }
  for (let i = from; i < last; i++) {
    if (text[i] === '\\') i++;
    else if (text[i] === quote) return i;
  }
  return -1;
}

/** Each match of `pattern` (global) given to `mask`, which masks what follows it, or leaves it. */
function maskAfter(text: string, pattern: RegExp, mask: (match: RegExpExecArray, at: number) => Masked | undefined): string {
  const re = new RegExp(pattern);
  let out = '';
  let from = 0;
  for (let m = re.exec(text); m; m = re.exec(text)) {
    const value = mask(m, m.index + m[0].length);
    if (!value) continue;
    out += text.slice(from, value.start) + value.masked;
    from = re.lastIndex = value.end;
  }
  return out + text.slice(from);
}

/**
 * A name (a whole run of word characters, dots and dashes, not a path's file or a namespace's part)
 * and its separator: `=`, `:`, `=>`, `:=`, after a closing quote or bracket (`'name' =>`, `"name":`,
 * `[name] =>` as print_r writes it, JSON's escaped `\"name\":`).
 */
const NAMED = /(?<![\w./\\-])(?=([\w.-]+))\1(?:\\?["'`]|\])?\s*(?:=>|:=|=(?![=>])|:(?!:))\s*/g;
/** Names that say secret but are not a setting's: a throwable's class (`Uncaught TokenException: …`), a file (`auth.php:12`). */
const NOT_A_SETTING = /(?:exception|error|\.php\d?|\.inc|\.phtml)$/i;
/** A cookie header, whose pairs its own rule masked (maskCookieHeaders). */
const COOKIE_HEADER_NAME = /^(?:set-)?cookie\s*:/i;
/** An Authorization scheme, kept before the credentials it introduces (`token: Bearer [masked]`); capitalised, as headers write them. */
const AUTH_SCHEME = /^(?:[Bb]earer|Basic|Token|Digest|Bot|OAuth|ApiKey|Key)\s+/;

function maskNamed(text: string): string {
  return maskAfter(text, NAMED, (m, at) => {
    const name = m[1]!;
    if (!SECRET_NAME_WORDS.test(name) || NOT_A_SETTING.test(name) || COOKIE_HEADER_NAME.test(m[0])) return undefined;
    // MySQL's own words: `Access denied for user 'wp'@'localhost' (using password: YES)` says whether one was sent, not which.
    if (/^password$/i.test(name) && text.slice(Math.max(0, m.index - 6), m.index) === 'using ' && /^(?:YES|NO)\)/.test(text.slice(at, at + 4)))
      return undefined;
    return valueAt(text, at + (AUTH_SCHEME.exec(text.slice(at, at + 20))?.[0].length ?? 0));
  });
}

/** `define('AUTH_KEY', 'value')`, as wp-config.php sets its keys and salts. */
const DEFINE = /\bdefine\s*\(\s*(["'])([^"']*)\1\s*,\s*/gi;

function maskDefines(text: string): string {
  return maskAfter(text, DEFINE, (m, at) => (SECRET_NAME_WORDS.test(m[2]!) ? valueAt(text, at) : undefined));
}

/**
 * Calls that take a password as an argument, as PHP's stack frames and messages quote them, and
 * which argument it is: `new PDO($dsn, $user, PASSWORD)`, `new mysqli($host, $user, PASSWORD, …)`,
 * `mysqli_real_connect($link, $host, $user, PASSWORD)`, `ftp_login($ftp, $user, PASSWORD)`.
 */
const PASSWORD_CALL =
  /(?:\bnew\s+\\?(?:PDO|mysqli)\b|\b(?:PDO|mysqli)\s*(?:->|::)\s*__construct|\bmysqli_connect|\b(mysqli_real_connect)|->\s*real_connect|\bftp_login|\bssh2_auth_password|\bldap_bind)\s*\(\s*/gi;

function maskPasswordArguments(text: string): string {
  return maskAfter(text, PASSWORD_CALL, (m, at) => {
    let start = at;
    for (let skip = m[1] ? 3 : 2; skip > 0; skip--) {
      const end = argumentEnd(text, start);
      const comma = /^\s*,\s*/.exec(text.slice(end, end + 40));
      if (!comma) return undefined;
      start = end + comma[0].length;
    }
    if (/^\\?["'`]/.test(text.slice(start, start + 2))) return valueAt(text, start);
    const end = argumentEnd(text, start);
    return end > start && !text.startsWith(MASK, start) ? { start, end, masked: MASK } : undefined;
  });
}

/**
 * Where the argument at `at` ends: after its closing quote, or at a `,` or `)` outside brackets
 * (`Object(SensitiveParameterValue)`). Looked for within ARGUMENT_MAX characters, so that a line of
 * calls never closed is not read once for each.
 */
function argumentEnd(text: string, at: number): number {
  const quote = /^["']/.exec(text[at] ?? '')?.[0];
  const last = Math.min(text.length, at + ARGUMENT_MAX);
  if (quote) {
    const close = closingQuote(text, at + 1, quote, last);
    return close === -1 ? last : close + 1;
  }
  let depth = 0;
  let i = at;
  for (; i < last; i++) {
    const c = text[i]!;
    if (c === '(' || c === '[') depth++;
    else if ((c === ')' || c === ']') && depth-- === 0) break;
    else if (c === ',' && depth === 0) break;
  }
  return i;
}

const ARGUMENT_MAX = 2000;

/** `Cookie:` and `Set-Cookie:` headers: each `name=value` of the list, the value masked. */
const COOKIE_HEADER = /\b(?:Set-)?Cookie\s*:\s*/gi;

function maskCookieHeaders(text: string): string {
  return maskAfter(text, COOKIE_HEADER, (_m, at) => {
    let out = '';
    let i = at;
    for (let pair = /^[^\s=;,]+=/.exec(text.slice(i, i + 300)); pair; pair = /^;\s*[^\s=;,]+=/.exec(text.slice(i, i + 300))) {
      const value = valueAt(text, i + pair[0].length, COOKIE_END);
      out += pair[0] + (value?.masked ?? '');
      i = value?.end ?? i + pair[0].length;
    }
    // A header that is no list of pairs: its value, as any other.
    return out === '' ? valueAt(text, at, COOKIE_END) : { start: at, end: i, masked: out };
  });
}

/**
 * A URL's user and password (`scheme://user:password@`, to the last `@` of the next 256 characters
 * before a space, as a password may hold one), or a user alone (a token given as one).
 */
const URL_CREDENTIALS = /(?<![a-z0-9+.-])([a-z][a-z0-9+.-]*:\/\/)[^\s/?#@:]*(?::\S{0,256})?@/gi;
/** A query's `name=` (`?api_key=`, `&amp;token=`): every value is masked, whatever its name. */
const QUERY_NAME = /[?&][^\s=&#?]+=/g;
/** Bearer and Basic credentials, wherever they are written (a word of small letters after Basic is English: `Basic authentication failed`). */
const AUTH_CREDENTIALS = /\b(?:[Bb]earer\s+|Basic\s+(?![a-z]+\b))/g;
/** A webhook URL's path after its `hooks/` (Slack, Discord, Zapier, Teams, a site's own): the rest of the path is its secret. */
const WEBHOOK_PATH = /\bhttps?:\/\/[^\s/?#]+\/(?:[^\s?#'"]{0,200}?\/)?(?:hooks|webhooks?|webhookb2|services|triggers|workflows)\//gi;

const CONTEXT_STEPS: readonly ((text: string) => string)[] = [
  (text) => text.replace(URL_CREDENTIALS, `$1${MASK}@`),
  maskCookieHeaders,
  maskDefines,
  maskPasswordArguments,
  maskNamed,
  (text) => maskAfter(text, AUTH_CREDENTIALS, (_m, at) => valueAt(text, at)),
  (text) => maskAfter(text, QUERY_NAME, (_m, at) => valueAt(text, at, QUERY_END)),
  (text) => maskAfter(text, WEBHOOK_PATH, (_m, at) => valueAt(text, at, QUERY_END)),
];

/** A path segment that may be a token (`/reset/<token>`, `/hooks/T0/B0/<token>`): 16 or more word characters, not a file's name. */
const PATH_SEGMENT = /(?<=\/)[\w-]{16,}(?![\w-]|\.\w)/g;

/**
 * Whether a path segment looks random rather than written: a part (between `-` and `_`) of 8 or
 * more characters that mixes letters and digits, 16 digits in a row, or 32 characters with no
 * separator. A slug (`woocommerce-gateway-stripe`, `wp-rocket-3`) is none of these.
 */
function tokenLike(segment: string): boolean {
  if (segment.length >= 32 && !/[-_]/.test(segment)) return true;
  return /\d{16}/.test(segment) || segment.split(/[-_]/).some((part) => part.length >= 8 && /\d/.test(part) && /[A-Za-z]/.test(part));
}
