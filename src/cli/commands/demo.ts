import { Option, type Command } from 'commander';
import type { GlobalOptions } from '../../app/runtime.js';
import { intOption } from '../parse.js';

export function registerDemo(program: Command): void {
  program
    .command('demo')
    .description('start the simulator in-process, plan and run the example playbooks against it, print the summaries')
    .option('--size <n>', 'sites in the simulated fleet (each with a live and often a staging environment)', intOption('--size', 1, 10_000), 40)
    .addOption(
      // For tests: the same demo, its waits (operations, polls, cache clears, health attempts) N times shorter.
      new Option('--speed <n>', "the simulator's operations and the runs' waits N times shorter")
        .argParser(intOption('--speed', 1, 100))
        .default(1)
        .hideHelp(),
    )
    .addHelpText('after', '\nExample:\n  npm run demo\n')
    .action(async (opts: { size: number; speed: number }, command: Command) => {
      const globals = command.optsWithGlobals<GlobalOptions>();
      // Loaded when the command runs: `sitefleet --version` or `validate` need none of it.
      const { runDemo } = await import('./demo-run.js');
      globals.io.exitCode = await runDemo(globals, opts.size, opts.speed);
    });
}
