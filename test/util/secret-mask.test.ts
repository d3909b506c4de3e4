import { describe, expect, it } from 'vitest';
import { MASK, maskSecretText } from '../../src/util/secret-mask.js';
import { TOKEN_RULES } from '../../src/util/secret-rules.js';
import { secretParts, TOKEN_SHAPES } from '../helpers/secret-shapes.js';

describe('maskSecretText: the token shapes (ported from gitleaks)', () => {
  it.each(TOKEN_SHAPES.map((shape) => [shape.id, shape] as const))('%s: masked whole, the words around it kept', (_id, shape) => {
    const token = shape.token(11);
    const text = shape.text?.(token) ?? `key ${token} refused`;
    const masked = maskSecretText(text);
    const [before, after] = text.split(token) as [string, string];
    expect(masked).toBe(`${before}${MASK}${after}`);
    for (const part of secretParts(token, before + after)) expect(masked).not.toContain(part);
  });

  it('every rule masks a token of its shape (none is dead), each with the gitleaks id it comes from', () => {
    for (const rule of TOKEN_RULES) {
      expect(rule.id).toMatch(/^[a-z0-9*-]+(?: [a-z0-9*-]+)*$/);
      const tokens = TOKEN_SHAPES.map((shape) => shape.text?.(shape.token(3)) ?? shape.token(3));
      expect(
        tokens.some((t) => new RegExp(rule.pattern).test(t)),
        rule.id,
      ).toBe(true);
    }
  });
});

describe('maskSecretText: what it keeps', () => {
  it('text with no secret, words that look like one aside', () => {
    for (const text of [
      'Uncaught Error: Call to undefined function wp_set_auth_cookie()',
      'Uncaught TypeError: tokenize(): Argument #1 ($text) must be of type string, array given',
      'Uncaught Exception: the task-scheduler-reservation-2024 failed for the monkey business',
      'Uncaught Error: Class "WooCommerce\\Admin\\API\\Reports\\Customers\\DataStore" not found',
      'Allowed memory size of 134217728 bytes exhausted (tried to allocate 20480 bytes)',
      'include(/www/shop_42/public/wp-content/cache/min/1/style.css): Failed to open stream',
      'Uncaught Exception: they said eyewitnesses saw it',
      'Uncaught InvalidArgumentException: Basic authentication requires a user name',
    ])
      expect(maskSecretText(text)).toBe(text);
  });

  it('reads a hostile line once: 200,000 characters of any pattern are masked in seconds, not minutes (no rule is quadratic)', () => {
    const n = 200_000;
    const hostile = [
      'a.',
      'key',
      'key=',
      'token: ',
      '&a',
      "new PDO('",
      'new PDO(a',
      'https://a/',
      'a://b:',
      "password='",
      "'",
      ['-----BEGIN', 'PRIVATE', 'KEY-----'].join(' '),
      'Cookie: a=b;',
      '/abcdefghijklmnop1',
      'a',
      "define('",
      'Bearer ',
      'eyJ',
      '\\"',
    ];
    for (const unit of hostile) {
      const text = unit.repeat(Math.ceil(n / unit.length));
      const started = performance.now();
      maskSecretText(text);
      // Linear work is tens of milliseconds here; a quadratic rule would take minutes.
      expect(performance.now() - started, unit).toBeLessThan(3000);
    }
  });
});
