import type { Command } from 'commander';
import { InvalidInputError, type InputProblem } from '../../errors.js';
import { loadPlaybook } from '../../playbook/load.js';
import type { GlobalOptions } from '../context.js';

export function registerValidate(program: Command): void {
  program
    .command('validate')
    .description('check playbooks offline: schema, targets, IPs, WP-CLI commands; sends nothing')
    .argument('<playbook...>', 'playbook files')
    .addHelpText(
      'after',
      '\nExit 0 when every playbook is valid; 2 with one line per problem (file:line:col: field: message).\n\nExample:\n  sitefleet validate playbooks/*.yaml\n',
    )
    .action((files: string[], _opts: unknown, command: Command) => {
      const opts = command.optsWithGlobals<GlobalOptions>();
      const problems: InputProblem[] = [];
      for (const file of files) {
        try {
          loadPlaybook(file, { company: opts.company });
          if (!opts.quiet) process.stdout.write(`${file}: valid\n`);
        } catch (error) {
          if (!(error instanceof InvalidInputError)) throw error;
          problems.push(...error.problems);
        }
      }
      if (problems.length > 0) throw new InvalidInputError(problems);
    });
}
