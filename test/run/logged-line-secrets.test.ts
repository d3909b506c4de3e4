import { describe, expect, it } from 'vitest';
import { KIND_TABLE } from '../../src/inventory/kinds.js';
import { LOGGED_LINE_MAX, maskSecrets, newFatal } from '../../src/run/fatal-line.js';
import { HEX, madeUp, TOKEN_SHAPES } from '../helpers/secret-shapes.js';

/**
 * The secrets a site's fatal error line may quote that the mask once let through (issue 54, item 6),
 * each masked whole with the words around it kept, and the item's path still in the line. Every
 * secret is made at run time (test/helpers/secret-shapes.ts).
 */
const ALL = Object.values(KIND_TABLE);
const ROOT = '/www/shopfront_42/public';
const AT = `in ${ROOT}/wp-content/plugins/shop/shop.php:12`;
const STAMP = '[25-Nov-2026 02:14:07 UTC] PHP Fatal error:  Uncaught Exception:';
const logged = (fragment: string) => newFatal('', `${STAMP} ${fragment} ${AT}`, ALL);

const value = madeUp(20, 1, `${HEX}XYZ/+`);
const secondValue = madeUp(16, 2);
const password = `${madeUp(10, 3)}!`;
const cookie = ['wordpress', 'logged', 'in', madeUp(32, 4, HEX)].join('_');
const token = (id: string) => TOKEN_SHAPES.find((t) => t.id === id)!.token(7);

describe('secrets the mask used to miss: each masked whole, the rest of the line as it was', () => {
  it.each([
    ['aws_secret_access_key=…', `aws_secret_access_key=${value}`, 'aws_secret_access_key=[masked]', [value]],
    ['WP_DB_PASSWORD=…', `WP_DB_PASSWORD=${value}`, 'WP_DB_PASSWORD=[masked]', [value]],
    ['access_token: …', `access_token: ${value}`, 'access_token: [masked]', [value]],
    ['a JWT, named by nothing', `session ${token('jwt')} expired`, 'session [masked] expired', [token('jwt')]],
    [
      'a fine-grained GitHub token',
      `git fetch failed with ${token('github-fine-grained-pat')}`,
      'git fetch failed with [masked]',
      [token('github-fine-grained-pat')],
    ],
    ['an OpenAI project key', `OpenAI key ${token('openai-api-key (project)')} rejected`, 'OpenAI key [masked] rejected', [token('openai-api-key (project)')]],
    [
      'the password given to new PDO',
      `PDO->__construct('mysql:host=db;dbname=wp', 'root', '${password}')`,
      "PDO->__construct('mysql:host=db;dbname=wp', 'root', '[masked]')",
      [password],
    ],
    [
      'the password given to mysqli_connect',
      `mysqli_connect('localhost', 'root', '${password}')`,
      "mysqli_connect('localhost', 'root', '[masked]')",
      [password],
    ],
    ['the password given to new mysqli', `new mysqli("localhost", "wp", "${password}", "wp")`, 'new mysqli("localhost", "wp", "[masked]", "wp")', [password]],
    ['a Cookie: header', `Cookie: ${cookie}=${value}; PHPSESSID=${secondValue}`, `Cookie: ${cookie}=[masked]; PHPSESSID=[masked]`, [value, secondValue]],
    ['a Set-Cookie: header', `Set-Cookie: ${cookie}=${value}; path=/; HttpOnly`, `Set-Cookie: ${cookie}=[masked]; path=[masked]; HttpOnly`, [value]],
    ['a login cookie, named by nothing else', `cookie ${cookie}=${value} refused`, `cookie ${cookie}=[masked] refused`, [value]],
    [
      'a token in a webhook URL’s path',
      `POST https://hooks.example.test/hooks/T0${secondValue}/B0${value} failed`,
      'POST https://hooks.example.test/hooks/[masked] failed',
      [secondValue, value],
    ],
    ['a token in a path', `GET /my-account/reset/${madeUp(40, 5, HEX)} 404`, 'GET /my-account/reset/[masked] 404', [madeUp(40, 5, HEX)]],
    ['a quoted password of several words', "password='my secret phrase' refused", "password='[masked]' refused", ['secret phrase']],
  ])('%s', (_label, fragment, masked, secrets) => {
    const found = logged(fragment)!;
    expect(found).toMatchObject({ plugin: 'shop' });
    expect(found.line).toBe(`${STAMP} ${masked} ${AT}`);
    for (const secret of secrets) expect(found.line).not.toContain(secret);
  });
});

describe('what the mask keeps', () => {
  it('the words of an ordinary fatal error, even those that say key, token, auth or password', () => {
    for (const line of [
      `PHP Fatal error:  Uncaught Stripe\\Exception\\AuthenticationException: Invalid API Key provided ${AT}`,
      `PHP Fatal error:  Uncaught TokenException: the session has expired ${AT}`,
      `PHP Fatal error:  Uncaught PDOException: SQLSTATE[HY000] [1045] Access denied for user 'wp'@'localhost' (using password: YES) ${AT}`,
      `PHP Fatal error:  Uncaught Error: Call to undefined function wp_set_auth_cookie() in ${ROOT}/wp-content/plugins/auth/includes/auth.php:12`,
      `PHP Fatal error:  Uncaught Error: session_start(): Undefined array key "password" in ${ROOT}/wp-includes/pluggable.php:3`,
      `PHP Fatal error:  Uncaught Error: Class "Vendor\\Auth\\TokenStore" not found in ${ROOT}/wp-content/themes/astra/secret-keys.php:7`,
    ])
      expect(maskSecrets(line)).toBe(line);
  });

  it('the item’s path, even where a value runs into it or its folder looks like a token', () => {
    expect(maskSecrets(`x token: ${ROOT}/wp-content/plugins/shop/shop.php:12`)).toBe('x token: [masked]/wp-content/plugins/shop/shop.php:12');
    const folder = madeUp(32, 9, HEX);
    const line = `PHP Fatal error:  x in ${ROOT}/wp-content/plugins/${folder}/p.php:1`;
    expect(newFatal('', line, ALL)).toEqual({ plugin: folder, line });
  });

  it('masks the whole line before it is cut: no part of a secret across the 500th character is kept', () => {
    const secret = token('github-fine-grained-pat');
    for (const shown of [4, 12, 30]) {
      // The secret starts `shown` characters before the cut; cut first, its head would be too short a token to know.
      const head = `${STAMP} ${'x'.repeat(LOGGED_LINE_MAX - STAMP.length - 2 - shown)} `;
      const found = newFatal('', `${head}${secret} ${AT}`, ALL)!;
      expect(found.line).toBe(`${head}[masked] ${AT}`.slice(0, LOGGED_LINE_MAX));
      expect(found.line).not.toContain(secret.slice(0, shown));
    }
  });
});
