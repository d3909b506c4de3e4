import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Command } from 'commander';
import type { GlobalOptions } from '../context.js';

/** The example playbooks shipped in `playbooks/`, in the order the demo runs them. */
export const EXAMPLES = ['theme-updates.yaml', 'php-staging.yaml', 'denied-ips.yaml', 'nightly-backups.yaml', 'wp-cli-and-dns.yaml'];
export const PLAYBOOKS_DIR = new URL('../../../playbooks/', import.meta.url);

export function registerDemo(program: Command): void {
  program
    .command('demo')
    .description('start the simulator in-process, plan and run the example playbooks against it, print the summaries')
    .option('--sites <n>', 'size of the simulated fleet', (v) => Number(v), 40)
    .addHelpText('after', '\nExample:\n  npm run demo\n')
    .action(async (opts: { sites: number }, command: Command) => {
      const globals = command.optsWithGlobals<GlobalOptions>();
      // Loaded when the command runs: `sitefleet --version` or `validate` need none of it.
      const [{ startSimulator }, { preparePlan }, { renderPlan }, { runPlaybook }] = await Promise.all([
        import('../../sim/server.js'),
        import('../prepare.js'),
        import('../render.js'),
        import('./run-playbook.js'),
      ]);
      const sim = await startSimulator({ sites: opts.sites, themes: 8, seed: 7, operationDelayMs: 200 });
      const reports = mkdtempSync(join(tmpdir(), 'sitefleet-demo-'));
      // The demo talks to its own simulator only, whatever the environment says.
      process.env.SITEFLEET_TOKEN = sim.token;
      const demoGlobals: GlobalOptions = {
        ...globals,
        baseUrl: sim.baseUrl,
        tokenFile: undefined,
        company: sim.companyId,
        // the demo's own --sites is a fleet size, not the global sites file
        sites: undefined,
        rate: globals.rate ?? '50/s',
        pollInterval: 100,
      };
      const say = (text: string) => process.stdout.write(`${text}\n`);
      let worst = 0;
      try {
        say(`simulator: ${sim.fleet.environments.size} environments at ${sim.baseUrl}; reports go to ${reports}\n`);
        const first = fileURLToPath(new URL(EXAMPLES[0]!, PLAYBOOKS_DIR));
        say(`== plan ${EXAMPLES[0]}`);
        const { plan, runtime } = await preparePlan(first, demoGlobals);
        await runtime.close();
        say(`${renderPlan(plan, false)}\n`);
        for (const name of EXAMPLES) {
          say(`== run ${name}`);
          const { exitCode } = await runPlaybook(
            fileURLToPath(new URL(name, PLAYBOOKS_DIR)),
            { ...demoGlobals, quiet: false },
            {
              yes: true,
              // Wait for the operations: the next playbook touches the same environments, and the
              // service fails an operation on an environment that is still busy.
              wait: true,
              report: join(reports, name.replace(/\.yaml$/, '.report.json')),
            },
          );
          worst = Math.max(worst, exitCode);
          say('');
        }
      } finally {
        await sim.stop();
      }
      process.exitCode = worst;
    });
}
