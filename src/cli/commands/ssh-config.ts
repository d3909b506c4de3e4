import { Option, type Command } from 'commander';
import type { GlobalOptions } from '../../app/runtime.js';
import type { SshConfigOptions } from './ssh-config-read.js';
import { addSelectorFlags } from '../selector-flags.js';

export function registerSshConfig(program: Command): void {
  addSelectorFlags(
    program
      .command('ssh-config')
      .description('an OpenSSH client config block for each selected environment (needs site ids: --sites FILE); sends no write')
      .addOption(new Option('--format <format>', '`ssh`: Host blocks for ~/.ssh/config.d/; `json`: the raw fields').choices(['ssh', 'json']).default('ssh')),
  )
    .addHelpText('after', '\nExample:\n  sitefleet ssh-config --sites sites.csv --environment live > ~/.ssh/config.d/fleet\n')
    .action(async (opts: SshConfigOptions, command: Command) => {
      const { printSshConfig } = await import('./ssh-config-read.js');
      const globals = command.optsWithGlobals<GlobalOptions>();
      globals.io.exitCode = await printSshConfig(globals, opts);
    });
}
