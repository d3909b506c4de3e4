import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { KIND_TABLE } from '../../src/inventory/kinds.js';
import { LOGGED_LINE_MAX, maskSecrets, newFatal, newFatalLines } from '../../src/run/fatal-line.js';

const ALL = Object.values(KIND_TABLE);
const ROOT = '/www/shopfront_42/public';
const fatal = (path: string, at = '25-Nov-2026 02:14:07') =>
  `[${at} UTC] PHP Fatal error:  Uncaught Error: Call to undefined function x_init() in ${ROOT}/${path}:123`;
/** What PHP writes after a fatal error's first line (site-logs.ts writes the same). */
const trace = (path: string) => ['Stack trace:', `#0 ${ROOT}/wp-settings.php(545): include_once()`, '#1 {main}', `  thrown in ${ROOT}/${path} on line 123`];
const notice = (i: number) =>
  `[25-Nov-2026 02:1${i % 10}:00 UTC] PHP Deprecated:  Creation of dynamic property in ${ROOT}/wp-content/plugins/old-${i}/old.php on line 9`;

describe('newFatal: the item a new fatal error line names', () => {
  it('names the plugin of the first fatal line that was not there before; lines at other offsets are still old', () => {
    const old = fatal('wp-content/plugins/jetpack/jetpack.php', '24-Nov-2026 10:00:00');
    const before = [notice(1), old, ...trace('wp-content/plugins/jetpack/jetpack.php'), notice(2)].join('\n');
    // The log is its last lines: the front of `before` fell off, and new lines came after.
    const line = fatal('wp-content/plugins/akismet/akismet.php');
    const after = [old, ...trace('x'), notice(2), notice(3), line, ...trace('wp-content/plugins/akismet/akismet.php')].join('\n');
    expect(newFatal(before, after, ALL)).toEqual({ plugin: 'akismet', line });
    expect(newFatalLines(before, after)).toEqual([line]);
    // Nothing new: nothing named, even though the old line names a plugin.
    expect(newFatal(before, before, ALL)).toBeUndefined();
    expect(newFatal(before, '', ALL)).toBeUndefined();
  });

  it('a theme by its folder, WordPress by wp-includes/, only the kinds asked about, the earliest path in a line', () => {
    const theme = fatal('wp-content/themes/astra/functions.php');
    expect(newFatal('', theme, ALL)).toEqual({ theme: 'astra', line: theme });
    const core = fatal('wp-includes/option.php');
    expect(newFatal('', core, ALL)).toEqual({ core: 'wordpress', line: core });
    expect(newFatal('', core, [KIND_TABLE.plugin])).toBeUndefined();
    const both = `PHP Fatal error:  Uncaught TypeError: a(): Argument #1 in ${ROOT}/wp-content/themes/astra/inc/x.php:3 called in ${ROOT}/wp-content/plugins/elementor/e.php`;
    expect(newFatal(undefined, both, ALL)).toMatchObject({ theme: 'astra' });
    expect(newFatal(undefined, both, [KIND_TABLE.plugin])).toMatchObject({ plugin: 'elementor' });
  });

  it('an uncaught exception logged without the PHP prefix counts; notices, warnings and stack lines do not', () => {
    const uncaught = `[25-Nov-2026 02:14:07 UTC] Uncaught Exception: boom in ${ROOT}/wp-content/plugins/forms/forms.php:7`;
    expect(newFatal('', uncaught, ALL)).toEqual({ plugin: 'forms', line: uncaught });
    const quiet = [notice(1), `PHP Warning:  include(): Failed opening in ${ROOT}/wp-content/plugins/a/a.php`, ...trace('wp-content/plugins/b/b.php')];
    expect(newFatal('', quiet.join('\n'), ALL)).toBeUndefined();
  });

  it('a folder that is not a plausible slug names nothing, and the next line that names one is taken', () => {
    for (const folder of ['Evil<script>', '..', '.', '', 'a b', 'ÄKISMET', 'x\u001b[31m', 'a%2Fb']) {
      const line = `PHP Fatal error:  x in ${ROOT}/wp-content/plugins/${folder}/p.php`;
      expect(newFatal('', line, ALL), folder).toBeUndefined();
    }
    const bad = `PHP Fatal error:  x in ${ROOT}/wp-content/plugins/Evil/p.php`;
    const good = fatal('wp-content/plugins/real-one/r.php');
    expect(newFatal('', `${bad}\n${good}`, ALL)).toEqual({ plugin: 'real-one', line: good });
    // Not a path segment: the tail of a longer folder name.
    expect(newFatal('', `PHP Fatal error:  x in /srv/my-wp-content/plugins/p/p.php`, ALL)).toBeUndefined();
  });

  it('without a log from before, the newest fatal line is the one taken (older ones may predate the write)', () => {
    const older = fatal('wp-content/plugins/old/old.php', '20-Nov-2026 01:00:00');
    const newer = fatal('wp-content/plugins/new/new.php');
    expect(newFatal(undefined, `${older}\n${newer}`, ALL)).toEqual({ plugin: 'new', line: newer });
    expect(newFatal('', `${older}\n${newer}`, ALL)).toEqual({ plugin: 'old', line: older });
  });

  it('keeps the line as data, CRLF endings aside, cut to 500 code points without splitting a pair', () => {
    const hostile = `${fatal('wp-content/plugins/akismet/a.php')} <script>alert(1)</script> \u001b[2J\u0007 <!channel> *bold* ${'😀'.repeat(600)}`;
    const found = newFatal('', `${hostile}\r\nnext`, ALL)!;
    expect(found).toMatchObject({ plugin: 'akismet' });
    expect(Array.from(found.line)).toHaveLength(LOGGED_LINE_MAX);
    expect(hostile.startsWith(found.line)).toBe(true);
    expect(found.line.endsWith('😀')).toBe(true);
  });
});

describe('a logged line keeps no secret the site wrote in it (it goes to 0644 reports, pages, the client, Slack, webhooks)', () => {
  const at = `in ${ROOT}/wp-content/plugins/shop/shop.php:12`;
  // Token shapes made of parts, so that no scanner takes this file for one holding a real credential.
  const jwt = ['eyJhbGciOiJIUzI1NiJ9', 'payload', 'sig'].join('.');
  const stripeKey = ['sk', 'live', '51Habcdefghijklmnop'].join('_');
  it.each([
    [`PHP Fatal error:  Uncaught Exception: GET https://api.example.com/v1/x?api_key=abcd1234SECRET&page=2 failed ${at}`, 'abcd1234SECRET'],
    [`PHP Fatal error:  Uncaught Exception: mysql://wp:hunter2secret@db.internal/wp refused ${at}`, 'hunter2secret'],
    [`PHP Fatal error:  Uncaught Error: bad config array ( 'password' => 'hunter2x', 'user' => 'u' ) ${at}`, 'hunter2x'],
    [`PHP Fatal error:  Uncaught Exception: Authorization: Bearer ${jwt} ${at}`, jwt.split('.')[0]!],
    [`PHP Fatal error:  Uncaught Stripe\\Exception\\AuthenticationException: key ${stripeKey} ${at}`, stripeKey],
    [`PHP Fatal error:  Uncaught Exception: DB_PASSWORD=xyz-very-secret, token: abc123def456 ${at}`, 'xyz-very-secret'],
    [`PHP Fatal error:  Uncaught Exception: DB_PASSWORD=xyz-very-secret, token: abc123def456 ${at}`, 'abc123def456'],
  ])('%s: the secret is masked, the culprit still named', (line, secret) => {
    const found = newFatal('', `[25-Nov-2026 02:14:07 UTC] ${line}`, ALL)!;
    expect(found).toMatchObject({ plugin: 'shop' });
    expect(found.line).not.toContain(secret);
    expect(found.line).toContain('[masked]');
    expect(found.line).toContain('/wp-content/plugins/shop/shop.php:12');
  });

  it('a line without one is kept as it was', () => {
    const line = fatal('wp-content/plugins/p0/p0.php');
    expect(maskSecrets(line)).toBe(line);
    const typed = 'PHP Fatal error:  Uncaught TypeError: tokenize(): Argument #1 ($text) must be of type string, array given';
    expect(maskSecrets(typed)).toBe(typed);
  });
});

describe('newFatal: properties', () => {
  /** Log lines of every sort: fatal or not, naming plugins or themes or nothing, with control characters, ANSI and HTML. */
  const slug = fc.stringMatching(/^[a-z0-9-]{1,12}$/);
  const noise = fc.string({ unit: fc.constantFrom('a', ' ', '<', '>', '&', '"', '\u001b', '[', '\u0000', '\u202e', '\t', '/', '`', '*'), maxLength: 20 });
  const line = fc
    .tuple(
      fc.constantFrom('PHP Fatal error:  Uncaught Error: x', 'PHP Notice: y', 'Stack trace:', 'Uncaught Exception: z'),
      fc.constantFrom('plugins', 'themes'),
      slug,
      noise,
      fc.nat(99),
    )
    .map(([head, kind, name, junk, n]) => `[${n}] ${head} ${junk} in ${ROOT}/wp-content/${kind}/${name}/f.php:${n}`);
  const log = fc.array(line, { maxLength: 12 });

  it('a line added anywhere in the log after the write never changes which of the other lines count as old', () => {
    fc.assert(
      fc.property(log, log, line, fc.nat(), (before, after, added, where) => {
        const at = where % (after.length + 1);
        const grown = [...after.slice(0, at), added, ...after.slice(at)];
        const newOf = (lines: string[]) => newFatalLines(before.join('\n'), lines.join('\n'));
        const others = newOf(grown).filter((l) => l !== added);
        expect(others).toEqual(newOf(after).filter((l) => l !== added));
        // And every new line is a fatal line of `after` that `before` does not hold.
        for (const l of newOf(after)) expect(before.includes(l)).toBe(false);
      }),
    );
  });

  it('what it names is a line of the log, as it was, whose kind and slug are written in it', () => {
    fc.assert(
      fc.property(log, log, (before, after) => {
        const found = newFatal(before.join('\n'), after.join('\n'), ALL);
        if (!found) return;
        expect(after).toContain(found.line);
        expect(before).not.toContain(found.line);
        const [kind, name] = Object.entries(found).find(([k]) => k !== 'line')!;
        expect(found.line).toContain(`/wp-content/${kind}s/${name}/`);
        expect(name).toMatch(/^[a-z0-9._-]+$/);
      }),
    );
  });
});
