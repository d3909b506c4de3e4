import { mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseDocument } from 'yaml';
import type { GlobalOptions } from '../../app/runtime.js';
import { EXIT } from '../../errors.js';
import type { Report } from '../../report/report.js';
import { startSimulator, type Simulator } from '../../sim/server.js';
import { preparePlan } from '../../app/prepare.js';
import { runPlaybook } from '../../app/run-playbook.js';
import { parseRate } from '../../util/rate.js';
import { parseDuration } from '../../util/duration.js';
import { KIND_TABLE } from '../../inventory/kinds.js';
import { PACKAGE_ROOT } from '../../util/package-files.js';
/** The kinds of item the demo's safe nights update (the simulator breaks sites by them). */
type Kind = 'theme' | 'plugin';
import { catalogOf, installedOf, latestOf } from '../../sim/fleet.js';
import type { Step } from '../../plan/plan.js';

/** The example playbooks shipped in `playbooks/`, in the order the demo runs them. */
export const EXAMPLES = [
  'theme-updates.yaml',
  'security-updates.yaml',
  'plugin-security.yaml',
  'php-staging.yaml',
  'denied-ips.yaml',
  'nightly-backups.yaml',
  'wp-cli-and-dns.yaml',
];
export const PLAYBOOKS_DIR = new URL('playbooks/', PACKAGE_ROOT);
/** Shown first, each on a version of its kind the simulator breaks: the rollout stops after its canary. */
export const SAFE_EXAMPLES: readonly { file: string; kind: Kind }[] = [
  { file: 'safe-theme-updates.yaml', kind: 'theme' },
  { file: 'safe-plugin-updates.yaml', kind: 'plugin' },
];

/** What every part of the demo works with: its simulator, where its reports go, the options aimed at them, and the terminal. */
interface Demo {
  sim: Simulator;
  reports: string;
  globals: GlobalOptions;
  say: (text: string) => void;
  /** `--speed`: how many times shorter its waits are than the demo's own (1: as a person watches it). */
  speed: number;
}

const example = (name: string) => fileURLToPath(new URL(name, PLAYBOOKS_DIR));
const reportOf = (demo: Demo, name: string) => join(demo.reports, name.replace(/\.yaml$/, '.report.json'));

/** `sitefleet demo`: the simulator, a plan, the safe rollout, every example, the operator's reads and the pages. Returns the worst exit code. */
export async function runDemo(globals: GlobalOptions, size: number, speed = 1): Promise<number> {
  const sim = await demoSimulator(globals, size, speed);
  const say = (text: string) => void globals.io.stdout.write(`${text}\n`);
  const demo: Demo = { sim, reports: mkdtempSync(join(tmpdir(), 'sitefleet-demo-')), globals, say, speed };
  demo.globals = demoGlobals(globals, demo);
  try {
    demo.say(`simulator: ${sim.fleet.environments.size} environments at ${sim.baseUrl}; reports go to ${demo.reports}\n`);
    demo.say(`== plan ${EXAMPLES[0]}`);
    const plan = await preparePlan(example(EXAMPLES[0]!), demo.globals, (prepared) => prepared.plan);
    demo.say(`${globals.view.plan(plan, false)}\n`);
    let worst = 0;
    for (const safe of SAFE_EXAMPLES) worst = Math.max(worst, await showSafeUpdates(demo, safe.file, safe.kind));
    for (const name of EXAMPLES) worst = Math.max(worst, await runExample(demo, name));
    await operatorReads(demo);
    await writePages(demo.reports, demo.say);
    return worst;
  } finally {
    await sim.stop();
  }
}

/**
 * The real service's habits (outcomes in the body, a window of its own for creating calls, here a
 * tenth of the demo's rate, operations unseen for a moment after acceptance). No general window:
 * the demo's runs follow each other at once, and each would find the one before in it. `speed`
 * divides its times (tests): what it does, and in which order, stays.
 */
function demoSimulator(globals: GlobalOptions, size: number, speed: number): Promise<Simulator> {
  const rate = parseRate(globals.rate ?? '50/s');
  return startSimulator({
    profile: 'real',
    createRate: { limit: Math.max(1, Math.floor(rate.limit / 10)), periodMs: rate.periodMs },
    sites: size,
    themes: 8,
    seed: 7,
    operationDelayMs: 200 / speed,
    operationVisibleAfterMs: 500 / speed,
    // The vendor's one manual cache clear per 10 s, scaled as the operations are (a restore's clear follows its write's).
    clearCacheGapMs: 1000 / speed,
  });
}

/** The demo talks to its own simulator only, whatever the environment says. */
function demoGlobals(globals: GlobalOptions, { sim, reports, speed }: Demo): GlobalOptions {
  return {
    ...globals,
    io: { ...globals.io, env: { ...globals.io.env, SITEFLEET_TOKEN: sim.token } },
    baseUrl: sim.baseUrl,
    tokenFile: undefined,
    company: sim.companyId,
    // the demo's own --sites is a fleet size, not the global sites file
    sites: undefined,
    rate: globals.rate ?? '50/s',
    pollInterval: Math.max(1, Math.round(100 / speed)),
    // Its locks and learned limits beside its reports: the simulator's company is the same in every
    // demo, so two demos on one machine (or a demo beside a real run's state) must not share a lock.
    stateDir: join(reports, 'state'),
  };
}

async function runExample(demo: Demo, name: string): Promise<number> {
  demo.say(`== run ${name}`);
  const { exitCode } = await runPlaybook(
    example(name),
    { ...demo.globals, quiet: false },
    // Wait for the operations: the next playbook touches the same environments, and the service
    // fails an operation on an environment that is still busy.
    { yes: true, wait: true, report: reportOf(demo, name) },
  );
  demo.say('');
  return exitCode;
}

/**
 * The reads an operator keeps open: what a scheduled run needs, and the morning-after check. Their
 * exit codes are the fleet's news (a key about to expire, environments that missed a backup), not the demo's.
 */
async function operatorReads({ globals, reports, say }: Demo): Promise<void> {
  const [{ runDoctor }, { showBackups }] = await Promise.all([import('../../app/doctor/checks.js'), import('./backups-table.js')]);
  say('== doctor');
  await runDoctor(globals, { expiryWarning: '14d', reportDir: reports, format: 'text' }, 14 * 86_400_000);
  say('\n== backups --site "acme-*" --environment live --max-age 26h');
  await showBackups({ ...globals, quiet: false }, { site: ['acme-*'], environment: ['live'], maxAge: '26h', format: 'table' }, 26 * 3_600_000);
}

/**
 * A safe playbook against an item version that breaks sites: the canary's own update is made to
 * break its page (a theme's critical error, a plugin's PHP fatal error), and the rollout must stop
 * there (exit 3), with the canary restored.
 */
async function showSafeUpdates(demo: Demo, file: string, kind: Kind): Promise<number> {
  const { sim, say } = demo;
  // The sites are the simulator's; the run's own stop line is in its summary, so the log keeps to errors.
  const safeGlobals = { ...demo.globals, healthUrl: sim.siteUrl, logLevel: 'error', quiet: false };
  const playbook = pacedExample(demo, file);
  const plan = await preparePlan(playbook, safeGlobals, (prepared) => prepared.plan);
  const item = canaryItem(sim, plan.steps, kind);
  if (!item) {
    say(`== ${file}: no ${kind} update to show on this fleet\n`);
    return 0;
  }
  const broken = kind === 'theme' ? sim.breakTheme(item) : sim.breakPlugin(item);
  const what = kind === 'theme' ? "WordPress's critical error" : `a PHP fatal error in ${KIND_TABLE[kind].codePath}`;
  say(`== run ${file} (the simulator now answers ${what} on every site running ${broken})`);
  const { exitCode } = await runPlaybook(playbook, safeGlobals, { yes: true, report: reportOf(demo, file) });
  const stopped = exitCode === EXIT.stopped;
  const restored = restoredCanary(reportOf(demo, file));
  say(
    !stopped
      ? 'the rollout did not stop after its canary\n'
      : restored
        ? 'the canary broke its site, so the rollout stopped there; the canary was restored from its restore point and is healthy again, the others untouched\n'
        : 'the canary broke its site, so the rollout stopped there, and it was not restored: see its line above\n',
  );
  return stopped && restored ? 0 : EXIT.someFailed;
}

/**
 * The safe playbook as shipped, or at `--speed` a copy beside the reports whose health attempts are
 * as many times closer: a broken canary is looked at three times, 3 s apart, before it is restored.
 */
function pacedExample({ speed, reports }: Demo, file: string): string {
  if (speed === 1) return example(file);
  const doc = parseDocument(readFileSync(example(file), 'utf8'));
  const tasks = (doc.toJS() as { tasks: { health?: { interval?: string } }[] }).tasks;
  tasks.forEach(({ health }, i) => {
    const ms = health?.interval === undefined ? undefined : parseDuration(health.interval);
    if (ms !== undefined) doc.setIn(['tasks', i, 'health', 'interval'], `${Math.max(1, Math.round(ms / speed))}ms`);
  });
  const paced = join(reports, 'playbooks', file);
  mkdirSync(join(reports, 'playbooks'), { recursive: true });
  writeFileSync(paced, doc.toString());
  return paced;
}

/**
 * `NAME@VERSION` for the simulator to break: an item the canary's update installs and runs (active),
 * at the version it installs, preferably one no site runs yet (those would be broken before any
 * write, and not the run's doing).
 */
function canaryItem(sim: Simulator, steps: readonly Step[], kind: Kind): string | undefined {
  const canary = steps.filter((s) => s.wave === 0 && s.role !== 'backup');
  const env = sim.fleet.environments.get(canary[0]?.target.env_id ?? '');
  if (!env) return undefined;
  const updates = canary.flatMap((s) => updatedBy(s.body, kind, sim));
  const active = updates.filter(([name]) => installedOf(env, kind).get(name)?.status === 'active');
  const runs = ([name, version]: [string, string]) =>
    [...sim.fleet.environments.values()].some(
      (e) => installedOf(e, kind).get(name)?.version === version && installedOf(e, kind).get(name)?.status === 'active',
    );
  const chosen = active.find((u) => !runs(u)) ?? active[0] ?? updates[0];
  return chosen && chosen.join('@');
}

/** The items a step's body updates, with the version each gets: a pinned update's own, a bulk update's newest. */
function updatedBy(body: unknown, kind: Kind, sim: Simulator): [string, string][] {
  const pinned = body as { name?: string; update_version?: string } | undefined;
  if (pinned?.name && pinned.update_version) return [[pinned.name, pinned.update_version]];
  const names = (body as Record<string, { name: string }[] | undefined> | undefined)?.[KIND_TABLE[kind].plural] ?? [];
  return names.flatMap(({ name }): [string, string][] => {
    const item = catalogOf(sim.fleet, kind).get(name);
    return item ? [[name, latestOf(item)]] : [];
  });
}

/**
 * The two pages `sitefleet report` writes, from the demo's reports: the safe rollout's run page
 * (its canary broken and restored on the timeline) and the maintenance record of every run.
 */
async function writePages(reports: string, say: (text: string) => void): Promise<void> {
  const { readReport, recordPageOf, runPageOf, writePage } = await import('../../app/report-pages.js');
  const safe = join(reports, SAFE_EXAMPLES[0]!.file.replace(/\.yaml$/, '.report.json'));
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
