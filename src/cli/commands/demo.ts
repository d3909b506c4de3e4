import type { Command } from 'commander';
import type { GlobalOptions } from '../../app/runtime.js';
import { intOption } from '../parse.js';

export function registerDemo(program: Command): void {
  program
    .command('demo')
    .description('start the simulator in-process, plan and run the example playbooks against it, print the summaries')
    .option('--size <n>', 'sites in the simulated fleet (each with a live and often a staging environment)', intOption('--size', 1, 10_000), 40)
    .addHelpText('after', '\nExample:\n  npm run demo\n')
    .action(async (opts: { size: number }, command: Command) => {
      const globals = command.optsWithGlobals<GlobalOptions>();
      // Loaded when the command runs: `sitefleet --version` or `validate` need none of it.
      const { runDemo } = await import('./demo-run.js');
      globals.io.exitCode = await runDemo(globals, opts.size);
    });
}
