import { UsageError } from '../../errors.js';
import type { Report } from '../../report/report.js';
import type { InputFile, OutputFile } from '../../util/output-file.js';
import { forTerminal } from '../../util/safe-text.js';
import type { GlobalOptions } from '../../app/runtime.js';
import { checkCommandOutputs, journalOf } from '../../app/output-check.js';
import { periodBound, readReport, recordPageOf, reportsFrom, runPageOf, writePage, type Brand } from '../../app/report-pages.js';

export interface ReportPageOptions extends Brand {
  html?: string;
  pdf?: string;
  from?: string;
  since?: string;
  until?: string;
  site?: string[];
}

/**
 * `sitefleet report`: the run's page for one report, the maintenance record for several (or
 * `--from`, or `--site`). Every output is checked before anything is read into a page, and a
 * missing Chromium for `--pdf` is exit 2 before anything is written.
 */
export async function reportPage(paths: string[], opts: ReportPageOptions, globals: GlobalOptions): Promise<void> {
  const io = globals.io;
  if (opts.html === undefined && opts.pdf === undefined) throw new UsageError('report: say where the page goes: --html FILE, --pdf FILE, or both');
  if (opts.from === undefined && paths.length === 0) throw new UsageError('report: name one or more reports, or --from DIR');
  if (opts.from === undefined && (opts.since !== undefined || opts.until !== undefined))
    throw new UsageError('--since and --until choose reports of --from DIR');
  const since = opts.since === undefined ? -Infinity : periodBound('--since', opts.since);
  const until = opts.until === undefined ? Infinity : periodBound('--until', opts.until);
  if (since >= until) throw new UsageError(`--since ${opts.since} is not before --until ${opts.until}: the period holds no time`);
  const outputs: OutputFile[] = [
    ...(opts.html === undefined ? [] : [{ flag: '--html', path: opts.html, kind: 'html' } as const]),
    ...(opts.pdf === undefined ? [] : [{ flag: '--pdf', path: opts.pdf, kind: 'pdf' } as const]),
  ];
  const inputs: InputFile[] = [
    ...paths.flatMap((p) => [{ what: 'a report this page reads', path: p }, journalOf(p, "a report's journal")]),
    ...(opts.logo === undefined ? [] : [{ what: 'the logo (--logo)', path: opts.logo }]),
  ];
  checkCommandOutputs(globals, outputs, inputs);
  const chromium = opts.pdf === undefined ? undefined : (await import('../../util/chromium.js')).findChromium(io.env);
  const reports = [...paths.map((path) => ({ path, report: readReport(path) })), ...(opts.from === undefined ? [] : reportsFrom(opts.from, since, until, io))];
  if (reports.length === 0)
    throw new UsageError(`--from ${opts.from}: no report of a run${(opts.since ?? opts.until) ? ' started in that period' : ''}; nothing was written`);
  const brand: Brand = {
    ...(opts.title !== undefined && { title: opts.title }),
    ...(opts.logo !== undefined && { logo: opts.logo }),
    ...(opts.footer !== undefined && { footer: opts.footer }),
  };
  const record = reports.length > 1 || opts.from !== undefined || opts.site !== undefined;
  const page = record
    ? recordPageOf(
        reports.map((r): Report => r.report),
        {
          ...(opts.site && { sites: opts.site }),
          ...(opts.since !== undefined && { since: opts.since }),
          ...(opts.until !== undefined && { until: opts.until }),
        },
        brand,
      )
    : runPageOf(reports[0]!.path, reports[0]!.report, brand, opts.html);
  await writePage(page, {
    ...(opts.html !== undefined && { html: opts.html }),
    ...(opts.pdf !== undefined && chromium !== undefined && { pdf: { path: opts.pdf, chromium, signals: io.signals } }),
  });
  const what = record ? `the maintenance record of ${reports.length} ${reports.length === 1 ? 'report' : 'reports'}` : "the run's page";
  for (const file of outputs) io.stderr.write(`sitefleet: wrote ${what} to ${forTerminal(file.path)}\n`);
}
