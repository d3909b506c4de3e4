import type { Command } from 'commander';
import { writeJsonAtomic } from '../../report/report.js';
import type { GlobalOptions } from '../context.js';
import { preparePlan } from '../prepare.js';
import { renderPlan } from '../render.js';

export function registerPlan(program: Command): void {
  program
    .command('plan')
    .description('read the fleet (GET requests only) and show what a run would send; sends no write')
    .argument('<playbook>', 'playbook file')
    .option('--out <file>', 'write the plan as JSON (schema: schemas/plan.schema.json)')
    .option('-v, --verbose', 'list every call with its method, path and body')
    .addHelpText('after', '\nExample:\n  sitefleet plan playbooks/theme-updates.yaml --verbose --out plan.json\n')
    .action(async (file: string, opts: { out?: string; verbose?: boolean }, command: Command) => {
      const globals = command.optsWithGlobals<GlobalOptions>();
      const { plan, runtime } = await preparePlan(file, globals);
      await runtime.close();
      if (opts.out) writeJsonAtomic(opts.out, plan);
      if (!globals.quiet) process.stdout.write(`${renderPlan(plan, opts.verbose ?? false)}\n${opts.out ? `plan written to ${opts.out}\n` : ''}`);
    });
}
