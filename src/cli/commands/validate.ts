import type { Command } from 'commander';
import { InvalidInputError, type InputProblem } from '../../errors.js';
import type { GlobalOptions } from '../../app/runtime.js';

export function registerValidate(program: Command): void {
  program
    .command('validate')
    .description('check playbooks offline: schema, targets, IPs, WP-CLI commands; sends nothing')
    .argument('<playbook...>', 'playbook files')
    .addHelpText(
      'after',
      "\nChecks everything that can be known without the service: the schema, targets, IP lists, WP-CLI commands,\nrates, and every request body against the API's rules. Unset ${VARS} are warnings (CI may lack them); --strict\nmakes them errors.\nExit 0 when every playbook is valid; 2 with one line per problem (file:line:col: field: message).\n\nExample:\n  sitefleet validate --strict playbooks/*.yaml\n",
    )
    .option('--strict', 'treat warnings (such as an unset ${VAR}) as errors')
    .action(async (files: string[], local: { strict?: boolean }, command: Command) => {
      const opts = command.optsWithGlobals<GlobalOptions>();
      const [{ loadChecked }, { warningLine }, { chromiumWarnings }] = await Promise.all([
        import('../../app/load-playbook.js'),
        import('../render.js'),
        import('../../app/visual.js'),
      ]);
      const problems: InputProblem[] = [];
      for (const file of files) {
        try {
          let warned: InputProblem[] = [];
          const playbook = loadChecked(file, { env: opts.io.env, company: opts.company, allowOutside: opts.allowOutside, onWarning: (w) => (warned = w) });
          // A browser is the machine's, not the playbook's: said here, refused by run.
          warned = [...warned, ...chromiumWarnings(playbook, opts.io.env)];
          if (local.strict) problems.push(...warned);
          else for (const w of warned) opts.io.stderr.write(`${warningLine(w)}\n`);
          if (!opts.quiet && (!local.strict || warned.length === 0))
            opts.io.stdout.write(`${file}: valid${warned.length ? ` (${warned.length} warnings)` : ''}\n`);
        } catch (error) {
          if (!(error instanceof InvalidInputError)) throw error;
          problems.push(...error.problems);
        }
      }
      if (problems.length > 0) throw new InvalidInputError(problems);
    });
}
