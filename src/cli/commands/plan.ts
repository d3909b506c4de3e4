import type { Command } from 'commander';
import type { GlobalOptions } from '../context.js';

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
      const [{ preparePlan }, { renderPlan }, { writeJsonAtomic }] = await Promise.all([
        import('../prepare.js'),
        import('../render.js'),
        import('../../report/report.js'),
      ]);
      const { plan, runtime } = await preparePlan(file, globals);
      await runtime.close();
      if (opts.out) writeJsonAtomic(opts.out, plan);
      if (!globals.quiet) process.stdout.write(`${renderPlan(plan, opts.verbose ?? false)}\n${opts.out ? `plan written to ${opts.out}\n` : ''}`);
    });
}
