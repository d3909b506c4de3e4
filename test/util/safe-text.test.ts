import { XMLParser } from 'fast-xml-parser';
import { describe, expect, it } from 'vitest';
import { parse as parseCsv } from '../../src/inventory/csv.js';
import { HOSTILE_NAMES } from '../../src/sim/hostile-names.js';
import { clip, forAnnotation, forAnnotationProperty, forCsv, forHtml, forMarkdown, forTerminal, forXml, jsonText, sshToken } from '../../src/util/safe-text.js';
import { expectSafeTerminal, expectStrictXml } from '../helpers/sinks.js';

describe('terminal', () => {
  it('shows every control, DEL, C1 and bidirectional character escaped, on one line', () => {
    expect(forTerminal('\u001b]0;pwned\u0007\u001b[2J')).toBe('\\x1b]0;pwned\\x07\\x1b[2J');
    expect(forTerminal('a\nb\rc\td')).toBe('a\\nb\\rc\\td');
    expect(forTerminal('\u009b31m \u007f \u202egpj \u2066x\u2069 \u2028')).toBe('\\x9b31m \\x7f \\u202egpj \\u2066x\\u2069 \\u2028');
    for (const name of HOSTILE_NAMES) expectSafeTerminal(forTerminal(name), name);
  });

  it('leaves ordinary text, including other scripts and emoji, as it is, and is idempotent', () => {
    for (const text of ['acme-shop/live', 'Café Müller', '東京店', 'shop 🛒', 'C:\\sites\\a', '']) expect(forTerminal(text)).toBe(text);
    for (const name of HOSTILE_NAMES) expect(forTerminal(forTerminal(name))).toBe(forTerminal(name));
  });

  it('escapes a lone surrogate but keeps a pair', () => {
    expect(forTerminal('a\ud800b')).toBe('a\\ud800b');
    expect(forTerminal('b\udc00')).toBe('b\\udc00');
    expect(forTerminal('😀')).toBe('😀');
  });

  it('never starts a line with a CI workflow command', () => {
    expect(forTerminal('::error::x')).toBe('\\x3a:error::x');
    expect(forTerminal('  ::set-output')).toBe('  \\x3a:set-output');
    expect(forTerminal('a ::error::x')).toBe('a ::error::x');
  });

  it('clips with a marked cut', () => {
    expect(clip('abcdef', 4)).toBe('abc…');
    expect(clip('abc', 4)).toBe('abc');
  });
});

describe('CSV', () => {
  it('prefixes cells a spreadsheet would run, and only those', () => {
    expect(forCsv('=1+2')).toBe("'=1+2");
    expect(forCsv('+cmd')).toBe("'+cmd");
    expect(forCsv('-2+3+cmd')).toBe("'-2+3+cmd");
    expect(forCsv('@SUM(1)')).toBe("'@SUM(1)");
    expect(forCsv('\tx')).toBe('\\tx');
    expect(forCsv('\rx')).toBe('\\rx');
    for (const plain of ['-1', '+2', '-3.5', '1e5', 'acme-shop', 'a=b']) expect(forCsv(plain)).toBe(plain);
    expect(forCsv(-7)).toBe('-7');
  });

  it('quotes as RFC 4180 says, and keeps each row on one line', () => {
    const cells = ['a,b', 'say "hi"', 'line\nbreak', 'plain'];
    expect(parseCsv(cells.map(forCsv).join(','))).toEqual([['a,b', 'say "hi"', 'line\\nbreak', 'plain']]);
  });

  it('writes every hostile name as one cell that no spreadsheet evaluates', () => {
    const row = parseCsv(HOSTILE_NAMES.map(forCsv).join(','))[0]!;
    expect(row).toHaveLength(HOSTILE_NAMES.length);
    // The parser trims spaces (not tabs) around fields, as spreadsheets do.
    for (const cell of row) expect(cell, cell).not.toMatch(/^[=+\-@\t\r]/);
    expect(row[1]).toBe(`'${HOSTILE_NAMES[1]}`);
  });
});

describe('XML', () => {
  it('replaces what XML 1.0 forbids, escapes markup, and keeps line breaks in attributes', () => {
    expect(forXml('a\u0000b\u001bc')).toBe('a\\x00b\\x1bc');
    expect(forXml(`<&>"'`)).toBe('&lt;&amp;&gt;&quot;&apos;');
    expect(forXml('a\nb\tc')).toBe('a&#10;b&#9;c');
    expect(forXml('\ufffe\ud800')).toBe('\\ufffe\\ud800');
  });

  it('gives a document a strict parser reads back, every hostile name in an attribute and in text', () => {
    const doc = `<?xml version="1.0" encoding="UTF-8"?>\n<r>${HOSTILE_NAMES.map((n) => `<c name="${forXml(n)}">${forXml(n)}</c>`).join('')}</r>`;
    expectStrictXml(doc);
    const parsed = new XMLParser({ ignoreAttributes: false, processEntities: true, htmlEntities: false }).parse(doc) as {
      r: { c: { '@_name': string }[] };
    };
    expect(parsed.r.c).toHaveLength(HOSTILE_NAMES.length);
  });
});

describe('HTML', () => {
  it('escapes markup and both quotes, and shows control characters as the terminal does', () => {
    expect(forHtml(`<img src=x onerror="a()">&'`)).toBe('&lt;img src=x onerror=&quot;a()&quot;&gt;&amp;&#39;');
    expect(forHtml('a\u001b[31mb\nc\u202ed')).toBe('a\\x1b[31mb\\nc\\u202ed');
    expect(forHtml('&amp;')).toBe('&amp;amp;');
  });

  it('leaves no hostile name a tag, a quote, a control character or a comment to hide in', () => {
    for (const name of HOSTILE_NAMES) {
      const html = forHtml(name);
      // eslint-disable-next-line no-control-regex -- the control characters are what is looked for
      expect(html, name).not.toMatch(/[<>"'\u0000-\u001f\u007f-\u009f\u202a-\u202e\u2028\u2029]/);
      expect(html.replace(/&(amp|lt|gt|quot|#39);/g, ''), name).not.toContain('&');
    }
  });
});

describe('Markdown and GitHub annotations', () => {
  it('a Markdown cell cannot close its cell, link, embed an image or inject a tag', () => {
    const cell = forMarkdown('pipe|cell [x](http://e) ![i](http://e/i.png) <b>tag</b>');
    expect(cell).toBe('pipe\\|cell \\[x\\]\\(http://e\\) \\!\\[i\\]\\(http://e/i.png\\) \\<b\\>tag\\</b\\>');
    expect(cell.replace(/\\./g, '')).not.toMatch(/[|[\]<>()]/);
    expectSafeTerminal(forMarkdown(HOSTILE_NAMES.join(' ')), 'markdown');
  });

  it('an annotation is one line, with % and line breaks encoded, and no escape sequence', () => {
    expect(forAnnotation('100% done')).toBe('100%25 done');
    expect(forAnnotationProperty('a: b, c')).toBe('a%3A b%2C c');
    for (const name of HOSTILE_NAMES) {
      const data = forAnnotation(name);
      expect(data).not.toMatch(/[\r\n]/);
      expectSafeTerminal(data, name);
    }
  });
});

describe('SSH config values', () => {
  it('takes plain tokens and refuses anything ssh would split, quote or read as a new line', () => {
    expect(sshToken('HostName', 'ssh.example.com')).toEqual({ value: 'ssh.example.com' });
    expect(sshToken('HostName', '2001:db8::1')).toEqual({ value: '2001:db8::1' });
    expect(sshToken('Port', 2222)).toEqual({ value: '2222' });
    expect(sshToken('User', 'site12-live')).toEqual({ value: 'site12-live' });
    for (const [field, value] of [
      ['User', 'shop\nProxyCommand touch /tmp/x'],
      ['User', 'a b'],
      ['User', '"quoted"'],
      ['User', '-oProxyCommand=x'],
      ['HostName', 'h\tProxyJump x'],
      ['HostName', '-oProxyCommand=x'],
      ['Port', '22 -oProxyCommand=x'],
      ['Port', '70000'],
      ['Port', ''],
      ['User', undefined],
    ] as const) {
      const answer = sshToken(field, value);
      expect('refused' in answer, `${field} ${String(value)}`).toBe(true);
      if ('refused' in answer) expectSafeTerminal(answer.refused, String(value));
    }
  });
});

describe('JSON', () => {
  it('parses back to exactly the same strings, and prints nothing a terminal acts on', () => {
    const value = { names: HOSTILE_NAMES, lone: 'a\ud800' };
    const text = jsonText(value, 2);
    expect(JSON.parse(text)).toEqual(value);
    expectSafeTerminal(text, 'json');
  });
});
