import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { KIND_TABLE } from '../../src/inventory/kinds.js';
import { maskSecrets, newFatal } from '../../src/run/fatal-line.js';
import { ALNUM, HEX, secretParts, SECRET_NAMES, TOKEN_SHAPES, VALUE_SHAPES } from '../helpers/secret-shapes.js';

/**
 * Whatever the secret and however it is written in a fatal error line, none of it reaches the line a
 * record keeps, and the item the line names is still named, its path still in the line.
 */
const ALL = Object.values(KIND_TABLE);

/** A secret's word: letters and digits, 6 to 14 of them (what secretParts looks for in the output). */
const word = fc.string({ unit: fc.constantFrom(...ALNUM), minLength: 6, maxLength: 14 });
/** A value that needs no quotes: words joined by what may stand inside one (`!`, `%`, `/`, `@`, `=`, `|`…). */
const bare = fc
  .tuple(fc.array(word, { minLength: 1, maxLength: 3 }), fc.constantFrom('!', '%', '*', '+', '-', '.', '/', ':', '=', '@', '^', '|', '~'))
  .map(([words, joint]) => words.join(joint));
/** A value that needs them: words joined by spaces and the separators that end a bare value. */
const phrase = fc
  .tuple(fc.array(word, { minLength: 1, maxLength: 4 }), fc.constantFrom(' ', ', ', '; ', ' & ', ') ', ' = ', ': ', '#', ' } '))
  .map(([words, joint]) => words.join(joint));

/** A name that says secret, as a site may write it: any of the words, with more before and after, in any case. */
const name = fc
  .tuple(
    fc.constantFrom('', 'WP_', 'wp_', 'aws_', 'X-', 'db.', 'my', 'client_', 'SECURE_', 'stripe-'),
    fc.constantFrom('key', 'secret', 'token', 'pass', 'password', 'passwd', 'pwd', 'auth', 'cookie', 'session', 'salt', 'nonce', 'credentials', 'logged_in'),
    fc.constantFrom('', '_KEY', '_id', '-value', 's', '2', '_SALT', 'word'),
    fc.constantFrom('as is', 'upper', 'lower'),
  )
  .map(([before, core, after, casing]) => {
    const n = `${before}${core}${after}`;
    return casing === 'upper' ? n.toUpperCase() : casing === 'lower' ? n.toLowerCase() : n;
  });

/** A secret in one of the shapes, with the words that say where. */
const secret = fc.oneof(
  fc
    .record({ shape: fc.constantFrom(...VALUE_SHAPES), name: fc.oneof(name, fc.constantFrom(...SECRET_NAMES)), bare, phrase })
    .map(({ shape, name, bare, phrase }) => {
      const value = shape.quoted ? phrase : bare;
      return { text: shape.line(name, value), value };
    }),
  fc.record({ shape: fc.constantFrom(...TOKEN_SHAPES), seed: fc.nat() }).map(({ shape, seed }) => {
    const value = shape.token(seed);
    return { text: shape.text?.(value) ?? value, value };
  }),
  // A random token in a URL's path: 16 to 40 letters and digits, one of each at least.
  fc
    .tuple(fc.string({ unit: fc.constantFrom(...ALNUM), minLength: 14, maxLength: 38 }), fc.constantFrom(...HEX.slice(0, 10)), fc.constantFrom('q', 'Z'))
    .map(([body, digit, letter]) => `${body}${digit}${letter}`)
    .map((value) => ({ text: `GET https://shop.example.test/account/reset/${value}?x=1 failed`, value })),
);

const slug = fc.stringMatching(/^[a-z0-9][a-z0-9-]{0,15}$/);
const ROOT = '/www/shopfront_42/public';

/** A fatal error line with the secret before or after the item's path, amid words that say key, token or auth. */
const fatal = fc
  .record({
    secret,
    kind: fc.constantFrom('plugin', 'theme'),
    slug,
    head: fc.constantFrom('Uncaught Exception:', 'Uncaught Stripe\\Exception\\AuthenticationException: Invalid API Key provided;', 'Uncaught TokenException:'),
    before: fc.boolean(),
  })
  .map(({ secret, kind, slug, head, before }) => {
    const path = `${ROOT}/wp-content/${kind}s/${slug}/inc/api.php:42`;
    const stamp = `[25-Nov-2026 02:14:07 UTC] PHP Fatal error:  ${head}`;
    const line = (text: string) => (before ? `${stamp} ${text} in ${path}` : `${stamp} failed loading ${path} with ${text}`);
    return { line: line(secret.text), clean: line('-'), value: secret.value, kind, slug };
  });

describe('a logged line keeps no secret: properties', () => {
  it('no part of the secret reaches the masked line, or the line a record keeps; the item is named, its path kept', () => {
    fc.assert(
      fc.property(fatal, ({ line, clean, value, kind, slug }) => {
        const parts = secretParts(value, clean);
        const masked = maskSecrets(line);
        for (const part of parts) expect(masked, part).not.toContain(part);
        const found = newFatal('', line, ALL);
        expect(found).toMatchObject({ [kind]: slug });
        for (const part of parts) expect(found!.line, part).not.toContain(part);
        expect(found!.line).toContain(`/wp-content/${kind}s/${slug}/inc/api.php:42`);
      }),
      { numRuns: 1000 },
    );
  });

  it('masking is idempotent: a masked line masked again is the same line', () => {
    fc.assert(
      fc.property(fatal, ({ line }) => {
        const once = maskSecrets(line);
        expect(maskSecrets(once)).toBe(once);
      }),
      { numRuns: 300 },
    );
  });
});
