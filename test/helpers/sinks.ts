import { XMLParser, XMLValidator } from 'fast-xml-parser';
import { expect } from 'vitest';
import type { RunEnd } from '../../src/notify/run-end.js';
import { summarize, type Report, type ReportResult } from '../../src/report/report.js';

/** A night's report of `results`, with `more` fields (`quarantined`, `stopped`), for a test of what the sinks make of it. */
export function nightReport(results: ReportResult[], more: Partial<Report> = {}): Report {
  return {
    version: 1,
    run_id: '5b0c6a52-4d3e-4b8e-9f4a-3c2b1a0f9e8d',
    playbook: 'night.yaml',
    name: 'night',
    company: '0f1e2d3c-4b5a-4697-8877-665544332211',
    mode: 'run',
    started_at: '2026-11-20T02:00:00.000Z',
    finished_at: '2026-11-20T02:10:00.000Z',
    stopped: null,
    summary: summarize(results),
    results,
    ...more,
  };
}

/** The end of the run a report tells of, as the channels are handed it: exit 1, the report at `path`. */
export function runEndOf(r: Report, path: string): RunEnd {
  return {
    name: r.name,
    company: r.company,
    runId: r.run_id,
    exitCode: 1,
    startedAt: new Date(r.started_at),
    finishedAt: new Date(r.finished_at),
    report: { value: r, path },
  };
}

/**
 * Characters a terminal may act on, other than the line feed that separates our own lines: C0, DEL,
 * C1, bidirectional controls, line separators. Written out here, apart from the module under test.
 */
// eslint-disable-next-line no-control-regex -- finding control characters is the point
const ACTS_ON_TERMINAL = /[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u061c\u200e\u200f\u2028-\u202e\u2066-\u2069]/;

/** Output a person reads: nothing that acts on a terminal, and no line forged by a name (a directive, a CI command). */
export function expectSafeTerminal(text: string, label: string): void {
  const found = ACTS_ON_TERMINAL.exec(text);
  expect(
    found
      ? `U+${found[0].charCodeAt(0).toString(16).padStart(4, '0')} at ${JSON.stringify(text.slice(Math.max(0, found.index - 30), found.index + 10))}`
      : null,
    label,
  ).toBeNull();
  for (const line of text.split('\n')) {
    expect(line, label).not.toMatch(/^\s*ProxyCommand/);
    expect(line, label).not.toMatch(/^\s*::(?!(error|warning) title=sitefleet)/);
  }
}

/** XML 1.0's Char production: what a document may hold, as text or as a character reference. */
function isXmlChar(code: number): boolean {
  return (
    code === 0x9 ||
    code === 0xa ||
    code === 0xd ||
    (code >= 0x20 && code <= 0xd7ff) ||
    (code >= 0xe000 && code <= 0xfffd) ||
    (code >= 0x10000 && code <= 0x10ffff)
  );
}

/**
 * A strict XML 1.0 reading: every character and character reference a Char (fast-xml-parser does not
 * check this, libxml2 and expat do), well-formed, and parsed. Returns the parsed document.
 */
export function expectStrictXml(doc: string): unknown {
  for (const c of doc) expect(isXmlChar(c.codePointAt(0)!), `U+${c.codePointAt(0)!.toString(16)} in the XML`).toBe(true);
  for (const m of doc.matchAll(/&#(x[0-9a-fA-F]+|[0-9]+);/g)) {
    const code = m[1]!.startsWith('x') ? parseInt(m[1]!.slice(1), 16) : Number(m[1]);
    expect(isXmlChar(code), `${m[0]} in the XML`).toBe(true);
  }
  expect(XMLValidator.validate(doc)).toBe(true);
  return new XMLParser({ ignoreAttributes: false }).parse(doc);
}
