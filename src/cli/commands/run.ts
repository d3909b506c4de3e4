import { join } from 'node:path';
import type { Command } from 'commander';
import { buildReport, exitCodeOf, writeJsonAtomic } from '../../report/report.js';
import { execute } from '../../run/executor.js';
import { confirm } from '../confirm.js';
import { UsageError, type GlobalOptions } from '../context.js';
import { emptyTargetProblems, preparePlan } from '../prepare.js';
import { Progress } from '../progress.js';
import { renderPlan, renderSummary } from '../render.js';
import { writeLoginLinks } from '../secret-outputs.js';

export interface RunOptions {
  dryRun?: boolean;
  report?: string;
  yes?: boolean;
  verbose?: boolean;
}

export function defaultReportPath(dir: string | undefined, now = new Date()): string {
  return join(dir ?? '.', `sitefleet-report-${now.toISOString().replace(/[:.]/g, '-')}.json`);
}

export function registerRun(program: Command): void {
  program
    .command('run')
    .description('plan from the live fleet, then send the calls under the rate limit and write a JSON report')
    .argument('<playbook>', 'playbook file')
    .option('--dry-run', 'do exactly what `plan` does and write the report with every step "planned"')
    .option('--report <file>', 'where the report goes (default: sitefleet-report-<timestamp>.json)')
    .option('-y, --yes', 'do not ask for confirmation (needed when not on a terminal)')
    .option('-v, --verbose', 'list every call of the plan before running')
    .addHelpText(
      'after',
      '\nExit codes: 0 all accepted or succeeded, 1 some failed or unknown, 2 invalid input or usage,\n3 run stopped (authentication, failure budget), 130 interrupted.\n\nExample:\n  SITEFLEET_TOKEN=… sitefleet run playbooks/nightly-backups.yaml --yes --report /var/log/sitefleet/backups.json\n',
    )
    .action(async (file: string, opts: RunOptions, command: Command) => {
      const { exitCode } = await runPlaybook(file, command.optsWithGlobals<GlobalOptions>(), opts);
      process.exitCode = exitCode;
    });
}

/** Plan, confirm, execute, report: the whole `run` command, also used by `demo`. */
export async function runPlaybook(file: string, globals: GlobalOptions, opts: RunOptions): Promise<{ exitCode: number; reportPath: string }> {
  const out = (text: string) => !globals.quiet && process.stdout.write(`${text}\n`);
  const startedAt = new Date();
  const prepared = await preparePlan(file, globals);
  const { plan, playbook, runtime } = prepared;
  try {
    const reportPath = opts.report ?? defaultReportPath(playbook.settings.report_dir, startedAt);
    out(renderPlan(plan, opts.verbose ?? false));
    const empty = emptyTargetProblems(prepared);
    if (empty) throw empty;
    if (opts.dryRun) {
      const report = buildReport({ plan, mode: 'dry-run', startedAt, finishedAt: new Date() });
      writeJsonAtomic(reportPath, report);
      out(renderSummary(report, reportPath));
      return { exitCode: 0, reportPath };
    }
    if (plan.steps.length > 0 && !opts.yes) {
      if (!process.stdin.isTTY) throw new UsageError('refusing to run without --yes: this is not an interactive terminal');
      const ok = await confirm(`Send ${plan.steps.length} calls (rate ${runtime.rate}, concurrency ${runtime.concurrency})?`);
      if (!ok) throw new UsageError('not confirmed; nothing was sent');
    }

    const interrupt = new AbortController();
    let signals = 0;
    const onSignal = (signal: NodeJS.Signals) => {
      signals++;
      if (signals > 1) process.exit(130);
      runtime.logger.warn({ signal }, 'interrupted: no new calls; waiting for those in flight (again to stop at once)');
      if (!globals.quiet) process.stderr.write(`\n${signal}: finishing the calls in flight; press Ctrl-C again to stop at once\n`);
      interrupt.abort();
    };
    process.on('SIGINT', onSignal);
    process.on('SIGTERM', onSignal);
    const progress = new Progress(plan.steps.length, process.stderr, !globals.quiet && process.stderr.isTTY === true);
    let outcome;
    try {
      outcome = await execute(plan, {
        caller: runtime.caller,
        logger: runtime.logger,
        concurrency: runtime.concurrency,
        maxFailures: playbook.settings.max_failures,
        signal: interrupt.signal,
        onEvent(event) {
          if (event.type !== 'result') return;
          const { step, result } = event;
          progress.step(result.status === 'failed' || result.status === 'unknown');
          runtime.logger.info(
            { step: step.id, task: step.task, env_id: step.target.env_id, status: result.status, http_status: result.http_status, operation_id: result.operation_id, attempts: result.attempts, reason: result.reason },
            'step ended',
          );
        },
      });
    } finally {
      progress.end();
      process.off('SIGINT', onSignal);
      process.off('SIGTERM', onSignal);
    }
    for (const f of writeLoginLinks(playbook, plan, outcome.results)) out(`login links written to ${f} (mode 0600)`);
    const report = buildReport({ plan, mode: 'run', startedAt, finishedAt: new Date(), results: outcome.results, stopped: outcome.stopped });
    writeJsonAtomic(reportPath, report);
    out(renderSummary(report, reportPath));
    return { exitCode: exitCodeOf(report), reportPath };
  } finally {
    await runtime.close();
  }
}
