import type { Command } from 'commander';
import type { GlobalOptions } from '../../app/runtime.js';
import type { ReportPageOptions } from './report-page.js';

export function registerReport(program: Command): void {
  program
    .command('report')
    .description("write a run's reports as one self-contained HTML page (or PDF): one report gives the run's page, several the maintenance record")
    .argument('[reports...]', 'reports written by `sitefleet run` (their journals beside them give the timeline)')
    .option('--html <file>', 'write the page here')
    .option('--pdf <file>', 'print the page to PDF here, with a Chromium of this machine (SITEFLEET_CHROMIUM, or on PATH)')
    .option('--from <dir>', "the maintenance record of every report in DIR (with --since and --until: the period's)")
    .option('--since <date>', 'with --from: reports of runs started on or after DATE (YYYY-MM-DD, UTC, or ISO 8601)')
    .option('--until <date>', 'with --from: reports of runs started up to DATE (a day is included whole)')
    .option('--site <glob...>', "the maintenance record of these sites only (one client's)")
    .option('--title <text>', "the page's title")
    .option('--logo <file>', 'a PNG, JPEG or SVG shown beside the title, embedded in the page (an SVG that scripts or links out is refused)')
    .option('--footer <text>', 'a line at the foot of the page')
    .addHelpText(
      'after',
      '\nThe page loads nothing and runs no script: it prints (A4), mails and archives as it is.\n' +
        'One report: its header, a figure per task, a timeline of the steps (from its journal), the failed steps, what continues.\n' +
        'Several reports, --from or --site: a section per site of what was done, its health checks and its incidents.\n\n' +
        'Examples:\n  sitefleet report /var/log/sitefleet/themes.json --html themes.html\n' +
        '  sitefleet report --from /var/log/sitefleet --since 2026-11-01 --until 2026-11-30 --site "acme-*" --title "Acme: November" --html acme.html\n',
    )
    .action(async (reports: string[], opts: ReportPageOptions, command: Command) => {
      const globals = command.optsWithGlobals<GlobalOptions>();
      const { reportPage } = await import('./report-page.js');
      await reportPage(reports, opts, globals);
    });
}
