import { existsSync, readdirSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { UsageError } from '../errors.js';
import type { Report } from '../report/report.js';
import { runPage } from '../report/html/run-page.js';
import { recordPage } from '../report/html/record-page.js';
import { logoDataUrl } from '../report/html/logo.js';
import { runTimes, type RunTimes } from '../report/html/spans.js';
import { journalPathFor } from '../run/journal.js';
import { readJournalRecordsBack } from '../run/journal-read-back.js';
import { readJsonFile } from '../util/json-input.js';
import { writeOutput } from '../util/output-file.js';
import type { Io, Signals } from './io.js';

/** A report of 50,000 steps is some 60 MB of JSON (as `status` reads it). */
const MAX_REPORT_BYTES = 512 << 20;

/** The agency's own brand on a page: `--title`, `--logo FILE`, `--footer TEXT`. */
export interface Brand {
  title?: string;
  logo?: string;
  footer?: string;
}

export function readReport(path: string): Report {
  return readJsonFile(path, { what: 'report', maxBytes: MAX_REPORT_BYTES, schema: 'report.schema.json' }).data as Report;
}

/**
 * When each step was sent and ended, from the journal beside the report (validated as resume reads
 * it), or why the page has no timeline: no journal, or one of another run.
 */
export function timesOf(reportPath: string, report: Report): RunTimes | { missing: string } {
  const journal = journalPathFor(reportPath);
  if (!existsSync(journal)) return { missing: `no journal beside the report (${journal}); the report keeps no send and end times` };
  let records;
  try {
    records = readJournalRecordsBack(journal);
  } catch (error) {
    // A journal that does not read back costs the page its timeline, never the page (nor a run's other outputs).
    return { missing: `the journal beside the report (${journal}) does not read back: ${(error as Error).message}` };
  }
  const start = records[0];
  if (start?.t !== 'start' || start.run_id !== report.run_id)
    return { missing: `the journal beside the report (${journal}) is another run's (run id ${start?.t === 'start' ? start.run_id : 'none'})` };
  return runTimes(records);
}

/** The run's page for one report. */
export function runPageOf(reportPath: string, report: Report, brand: Brand, pagePath?: string): string {
  // Screenshots are named from the report's folder: the page leads there from its own.
  const imageBase =
    pagePath === undefined
      ? ''
      : relative(dirname(resolve(pagePath)), dirname(resolve(reportPath)))
          .split(sep)
          .join('/');
  return runPage({ report, reportPath, times: timesOf(reportPath, report), imageBase, ...brandParts(brand) });
}

function brandParts(brand: Brand): { title?: string; logo?: string; footer?: string } {
  return {
    ...(brand.title !== undefined && { title: brand.title }),
    ...(brand.logo !== undefined && { logo: logoDataUrl(brand.logo) }),
    ...(brand.footer !== undefined && { footer: brand.footer }),
  };
}

/** `--since`/`--until`: a day (YYYY-MM-DD, UTC; `--until`'s day is included whole) or an ISO 8601 instant. */
export function periodBound(flag: '--since' | '--until', text: string): number {
  const day = /^\d{4}-\d{2}-\d{2}$/.test(text);
  const ms = Date.parse(day ? `${text}T00:00:00Z` : text);
  if (!Number.isFinite(ms) || (!day && !/^\d{4}-\d{2}-\d{2}T/.test(text))) throw new UsageError(`${flag} ${text}: not a date (YYYY-MM-DD) or an ISO 8601 time`);
  return day && flag === '--until' ? ms + 86_400_000 : ms;
}

/**
 * The reports of `--from DIR` whose run started within the period: every `*.json` file of the
 * folder that is a report (plans, metrics and other JSON beside them are passed over, one line each
 * on stderr so a report that does not read is not lost in silence).
 */
export function reportsFrom(dir: string, since: number, until: number, io: Io): { path: string; report: Report }[] {
  let names: string[];
  try {
    names = readdirSync(dir)
      .filter((n) => n.endsWith('.json'))
      .sort();
  } catch (error) {
    throw new UsageError(`--from ${dir}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`);
  }
  const found: { path: string; report: Report }[] = [];
  for (const name of names) {
    const path = join(dir, name);
    let report: Report;
    try {
      report = readReport(path);
    } catch (error) {
      if ((error as { exitCode?: number }).exitCode !== 2) throw error;
      io.stderr.write(`sitefleet: ${path} is not a report sitefleet reads: passed over\n`);
      continue;
    }
    const at = Date.parse(report.started_at);
    if (at >= since && at < until) found.push({ path, report });
  }
  return found;
}

/** The maintenance record of several reports. */
export function recordPageOf(reports: readonly Report[], options: { sites?: string[]; since?: string; until?: string }, brand: Brand): string {
  return recordPage({ reports, ...options, ...brandParts(brand) });
}

/** Writes the page, and prints it to PDF with the Chromium found for `--pdf` (see pdf.ts, loaded only then). */
export async function writePage(page: string, files: { html?: string; pdf?: { path: string; chromium: string; signals: Signals } }): Promise<void> {
  if (files.html !== undefined) writeOutput({ flag: '--html', path: files.html, kind: 'html' }, page);
  if (files.pdf !== undefined) {
    const { printPdf } = await import('./pdf.js');
    writeOutput({ flag: '--pdf', path: files.pdf.path, kind: 'pdf' }, await printPdf(files.pdf.chromium, page, { signals: files.pdf.signals }));
  }
}
