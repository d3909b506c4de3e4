import { mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Command } from 'commander';
import type { GlobalOptions } from '../context.js';
import { intOption } from '../parse.js';
import { EXIT } from '../../errors.js';
import type { Report } from '../../report/report.js';

/** The example playbooks shipped in `playbooks/`, in the order the demo runs them. */
export const EXAMPLES = ['theme-updates.yaml', 'security-updates.yaml', 'php-staging.yaml', 'denied-ips.yaml', 'nightly-backups.yaml', 'wp-cli-and-dns.yaml'];
export const PLAYBOOKS_DIR = new URL('../../../playbooks/', import.meta.url);
/** Shown first, on a theme version the simulator breaks: the rollout stops after its canary. */
export const SAFE_EXAMPLE = 'safe-theme-updates.yaml';

export function registerDemo(program: Command): void {
  program
    .command('demo')
    .description('start the simulator in-process, plan and run the example playbooks against it, print the summaries')
    .option('--size <n>', 'sites in the simulated fleet (each with a live and often a staging environment)', intOption('--size', 1, 10_000), 40)
    .addHelpText('after', '\nExample:\n  npm run demo\n')
    .action(async (opts: { size: number }, command: Command) => {
      const globals = command.optsWithGlobals<GlobalOptions>();
      // Loaded when the command runs: `sitefleet --version` or `validate` need none of it.
      const [{ startSimulator }, { preparePlan }, { renderPlan, painter }, { runPlaybook }, { parseRate }] = await Promise.all([
        import('../../sim/server.js'),
        import('../prepare.js'),
        import('../render.js'),
        import('./run-playbook.js'),
        import('../../util/rate.js'),
      ]);
      // The real service's habits (outcomes in the body, a window of its own for creating calls, here a
      // tenth of the demo's rate, operations unseen for a moment after acceptance). No general window:
      // the demo's runs follow each other at once, and each would find the one before in it.
      const rate = parseRate(globals.rate ?? '50/s');
      const sim = await startSimulator({
        profile: 'real',
        createRate: { limit: Math.max(1, Math.floor(rate.limit / 10)), periodMs: rate.periodMs },
        sites: opts.size,
        themes: 8,
        seed: 7,
        operationDelayMs: 200,
        operationVisibleAfterMs: 500,
      });
      const reports = mkdtempSync(join(tmpdir(), 'sitefleet-demo-'));
      // The demo talks to its own simulator only, whatever the environment says.
      const demoGlobals: GlobalOptions = {
        ...globals,
        io: { ...globals.io, env: { ...globals.io.env, SITEFLEET_TOKEN: sim.token } },
        baseUrl: sim.baseUrl,
        tokenFile: undefined,
        company: sim.companyId,
        // the demo's own --sites is a fleet size, not the global sites file
        sites: undefined,
        rate: globals.rate ?? '50/s',
        pollInterval: 100,
        // Its locks and learned limits beside its reports: the simulator's company is the same in every
        // demo, so two demos on one machine (or a demo beside a real run's state) must not share a lock.
        stateDir: join(reports, 'state'),
      };
      const say = (text: string) => void globals.io.stdout.write(`${text}\n`);
      let worst = 0;
      try {
        say(`simulator: ${sim.fleet.environments.size} environments at ${sim.baseUrl}; reports go to ${reports}\n`);
        const first = fileURLToPath(new URL(EXAMPLES[0]!, PLAYBOOKS_DIR));
        say(`== plan ${EXAMPLES[0]}`);
        const { plan, runtime } = await preparePlan(first, demoGlobals);
        await runtime.close();
        say(`${renderPlan(plan, false, painter(globals.io))}\n`);
        worst = Math.max(worst, await showSafeUpdates());
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
        // The reads an operator keeps open: what a scheduled run needs, and the morning-after check.
        // Their exit codes are the fleet's news (a key about to expire, environments that missed a backup), not the demo's.
        const [{ runDoctor }, { checkBackups }] = await Promise.all([import('./doctor-checks.js'), import('./backups-check.js')]);
        say('== doctor');
        await runDoctor(demoGlobals, { expiryWarning: '14d', reportDir: reports, format: 'text' }, 14 * 86_400_000);
        say('\n== backups --site "acme-*" --environment live --max-age 26h');
        await checkBackups({ ...demoGlobals, quiet: false }, { site: ['acme-*'], environment: ['live'], maxAge: '26h', format: 'table' }, 26 * 3_600_000);
        await writePages(reports, say);
      } finally {
        await sim.stop();
      }
      globals.io.exitCode = worst;

      /**
       * The safe playbook against a theme version that breaks sites: the canary's own update is made
       * to break its page, and the rollout must stop there (exit 3), with the canary restored.
       */
      async function showSafeUpdates(): Promise<number> {
        const file = fileURLToPath(new URL(SAFE_EXAMPLE, PLAYBOOKS_DIR));
        // The sites are the simulator's; the run's own stop line is in its summary, so the log keeps to errors.
        const safeGlobals = { ...demoGlobals, healthUrl: sim.siteUrl, logLevel: 'error', quiet: false };
        const { plan, runtime } = await preparePlan(file, safeGlobals);
        await runtime.close();
        const canary = plan.steps.find((s) => s.wave === 0 && s.role !== 'backup');
        const theme = (canary?.body as { themes?: { name: string }[] } | undefined)?.themes?.[0]?.name;
        if (!theme) {
          say(`== ${SAFE_EXAMPLE}: no theme update to show on this fleet\n`);
          return 0;
        }
        const broken = sim.breakTheme(`${theme}@latest`);
        say(`== run ${SAFE_EXAMPLE} (the simulator now answers WordPress's critical error on every site running ${broken})`);
        const reportFile = join(reports, SAFE_EXAMPLE.replace(/\.yaml$/, '.report.json'));
        const { exitCode } = await runPlaybook(file, safeGlobals, { yes: true, report: reportFile });
        const stopped = exitCode === EXIT.stopped;
        const restored = restoredCanary(reportFile);
        say(
          !stopped
            ? 'the rollout did not stop after its canary\n'
            : restored
              ? 'the canary broke its site, so the rollout stopped there; the canary was restored from its restore point and is healthy again, the others untouched\n'
              : 'the canary broke its site, so the rollout stopped there, and it was not restored: see its line above\n',
        );
        return stopped && restored ? 0 : EXIT.someFailed;
      }
    });
}

/**
 * The two pages `sitefleet report` writes, from the demo's reports: the safe rollout's run page
 * (its canary broken and restored on the timeline) and the maintenance record of every run.
 */
async function writePages(reports: string, say: (text: string) => void): Promise<void> {
  const { readReport, recordPageOf, runPageOf, writePage } = await import('../report-pages.js');
  const safe = join(reports, SAFE_EXAMPLE.replace(/\.yaml$/, '.report.json'));
  const runHtml = join(reports, 'run.html');
  await writePage(runPageOf(safe, readReport(safe), {}), { html: runHtml });
  const all = readdirSync(reports)
    .filter((n) => n.endsWith('.report.json'))
    .map((n) => readReport(join(reports, n)));
  const recordHtml = join(reports, 'record.html');
  await writePage(recordPageOf(all, {}, { title: 'Maintenance record: the demo fleet', footer: 'sitefleet demo' }), { html: recordHtml });
  say(`\n== pages (sitefleet report … --html)\nthe safe rollout's page: ${runHtml}\nthe maintenance record of every run: ${recordHtml}`);
}

/** Whether the demo's broken canary was put back and is healthy again, as its report says. */
function restoredCanary(reportFile: string): boolean {
  const report = JSON.parse(readFileSync(reportFile, 'utf8')) as Report;
  return report.results.some((r) => r.status === 'failed' && r.restored?.status === 'succeeded' && r.restored.health?.outcome === 'healthy');
}
