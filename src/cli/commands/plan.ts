import type { Command } from 'commander';
import type { GlobalOptions } from '../../app/runtime.js';
import { reportError } from '../report-error.js';
import { checkCommandOutputs, journalOf } from '../../app/output-check.js';

interface PlanOptions {
  out?: string;
  verbose?: boolean;
  detailedExitcode?: boolean;
  history?: string;
}

/** `--detailed-exitcode`, as Terraform's: CI asks "is there anything to send?" without parsing output. */
const DETAILED = { nothing: 0, error: 1, something: 2 } as const;

export function registerPlan(program: Command): void {
  program
    .command('plan')
    .description('read the fleet (GET requests only) and show what a run would send; sends no write')
    .argument('<playbook>', 'playbook file')
    .option('--out <file>', 'write the plan as JSON (schema: schemas/plan.schema.json); `run --plan FILE` applies it')
    .option('-v, --verbose', 'list every call with its method, path and body')
    .option('--history <report>', "learn how long operations take from an earlier run's report (its journal), for the estimate")
    .option(
      '--detailed-exitcode',
      `exit ${DETAILED.nothing} when there is nothing to send, ${DETAILED.something} when there is, ${DETAILED.error} on any error`,
    )
    .addHelpText('after', '\nExample:\n  sitefleet plan playbooks/theme-updates.yaml --verbose --history last-night.json --out plan.json\n')
    .action(async (file: string, opts: PlanOptions, command: Command) => {
      const globals = command.optsWithGlobals<GlobalOptions>();
      try {
        const steps = await plan(file, opts, globals);
        if (opts.detailedExitcode) globals.io.exitCode = steps > 0 ? DETAILED.something : DETAILED.nothing;
      } catch (error) {
        if (!opts.detailedExitcode) throw error;
        // 2 means "something to send" here: any failure, bad input included, is 1.
        reportError(error, globals.io.stderr);
        globals.io.exitCode = DETAILED.error;
      }
    });
}

/** Plans, prints and saves; returns the number of calls the plan would send. */
async function plan(file: string, opts: PlanOptions, globals: GlobalOptions): Promise<number> {
  const [{ preparePlan }, { renderPlan, painter }, { writeJsonAtomic }, { estimateLines, readHistory }, { sealOf }, { readToken }] = await Promise.all([
    import('../../app/prepare.js'),
    import('../render.js'),
    import('../../report/report.js'),
    import('../../app/estimate.js'),
    import('../../util/seal.js'),
    import('../../app/runtime.js'),
  ]);
  // The saved plan and the log are checked before the fleet is read (see util/output-file.ts).
  checkCommandOutputs(globals, opts.out ? [{ flag: '--out', path: opts.out, kind: 'plan' }] : [], [
    { what: 'the playbook', path: file },
    ...(opts.history === undefined ? [] : [{ what: 'the --history report', path: opts.history }, journalOf(opts.history, "the --history report's journal")]),
  ]);
  const history = opts.history === undefined ? undefined : readHistory(opts.history);
  const { plan, pace, inventory } = await preparePlan(file, globals, ({ plan, runtime, inventory }) => ({ plan, pace: runtime.pace, inventory }));
  const { slotPreviewLines } = await import('../../app/slot-preview.js');
  // Sealed with the token: `run --plan FILE` trusts the playbook a plan names only under its own token's seal.
  if (opts.out)
    writeJsonAtomic(
      { flag: '--out', path: opts.out, kind: 'plan' },
      {
        ...plan,
        seal: sealOf(
          readToken(globals, () => undefined),
          'plan',
          plan,
        ),
      },
    );
  if (!globals.quiet)
    globals.io.stdout.write(
      `${[renderPlan(plan, opts.verbose ?? false, painter(globals.io), globals.io.now()), ...estimateLines(plan, pace, history), ...slotPreviewLines(plan, inventory)].join('\n')}\n${opts.out ? `plan written to ${opts.out}; apply it with \`sitefleet run --plan ${opts.out}\`\n` : ''}`,
    );
  return plan.steps.length;
}
