import { forTerminal } from '../util/safe-text.js';
import { InvalidInputError, readingFirst, UsageError } from '../errors.js';
import { resolveHealth } from '../health/spec.js';
import type { Inventory } from '../inventory/inventory.js';
import { inventoryReader, readBackups, readDomains, readEnvironmentItems, readInventory, readKind, type InventoryReader } from '../inventory/read.js';
import { ambiguousSiteNames, attachListedSiteIds, attachSiteIds, loadSitesFile, readSiteIds } from '../inventory/sites.js';
import { selectEnvironments } from '../plan/select.js';
import { loadChecked } from './load-playbook.js';
import type { Playbook } from '../playbook/types.js';
import { buildPlan, type Plan } from '../plan/plan.js';
import { itemReadsNeeded, kindOf, kindsNeeded, namedSightings, readsNeeded, releasesNeeded, stagingNeeded, withholdingNeeded } from '../plan/needs.js';
import { withholdingOf } from './withheld-record.js';
import { releaseClock } from './release-clock.js';
import type { Inventory as Fleet } from '../inventory/inventory.js';
import type { GlobalOptions, Runtime } from './runtime.js';
import { RunScope } from './run-scope.js';
import { playbookSha256 } from './saved-plan.js';

export function today(now = new Date()): string {
  return now.toISOString().slice(0, 10);
}

export interface Prepared {
  playbook: Playbook;
  inventory: Inventory;
  plan: Plan;
  runtime: Runtime;
}

/** Load and validate the playbook (no network): its company is what `run` locks before reading the fleet. */
export function loadForRun(file: string, opts: GlobalOptions): Playbook & { company: string } {
  const playbook = loadChecked(file, {
    env: opts.io.env,
    requireEnv: true,
    company: opts.company,
    allowOutside: opts.allowOutside,
    onWarning: (warnings) => {
      if (!opts.quiet) for (const w of warnings) opts.io.stderr.write(`${opts.view.warning(w)}\n`);
    },
  });
  if (!playbook.company) {
    throw new InvalidInputError([
      { file, ...playbook.locate('company'), path: 'company', message: 'no company: give it in the playbook, SITEFLEET_COMPANY or --company' },
    ]);
  }
  if (opts.healthUrl !== undefined) withHealthUrl(playbook, opts.healthUrl);
  return playbook as Playbook & { company: string };
}

/**
 * `--health-url`: every task's checks fetch this page instead (an address only this machine
 * reaches, a staging proxy, the simulator's sites); the rest of each task's `health:` stays.
 */
function withHealthUrl(playbook: Playbook, url: string): void {
  const { problems } = resolveHealth({ url });
  if (problems.length > 0) throw new UsageError(`--health-url: ${problems[0]!.message}`);
  for (const task of playbook.tasks) if (task.health) task.health = { ...task.health, url };
}

/** Load and validate the playbook, read the fleet (GETs only) in a scope of its own, and build the plan. */
export function preparePlan<T>(file: string, globals: GlobalOptions, work: (prepared: Prepared) => T | Promise<T>): Promise<T> {
  const playbook = loadForRun(file, globals);
  return RunScope.with(globals, undefined, async (scope) => work(await planFrom(playbook, scope)));
}

/**
 * Read the fleet (GETs only, through the company's budget, shared with coordination) and build the
 * plan of a loaded playbook, with the scope's runtime (made here, under the playbook's settings).
 */
export async function planFrom(
  playbook: Playbook & { company: string },
  scope: RunScope,
  /** `{{date}}`: today, or a saved plan's date (its tags and bodies are checked against a plan made for that day). */
  date = today(),
): Promise<Prepared> {
  const file = playbook.file;
  const opts = scope.globals;
  const runtime = scope.runtime({ settings: playbook.settings, company: playbook.company });
  // Only GETs so far: a service, base URL or company not reached is said as such (exit 6), nothing sent.
  const inventory = await readingFirst({ baseUrl: opts.baseUrl, company: playbook.company }, () => readFleet(runtime, playbook, opts));
  // First-seen times are recorded before the plan, so before any write (app/release-clock.ts).
  const releases = releasesNeeded(playbook, inventory) ? await releaseClock(scope.coordination, inventory, opts.io.now(), namedSightings(playbook)) : undefined;
  // What the company's staging steps recorded as they ended (nothing is recorded before the plan).
  const staging = stagingNeeded(playbook) ? { now: opts.io.now(), table: await scope.coordination.staging(inventory.company).record([]) } : undefined;
  // What the company's runs left alone for later: quarantined versions, writes waiting their backoff
  // (what this inventory shows the fleet moved past is folded away first, before any write).
  const withholding = withholdingNeeded(playbook)
    ? await withholdingOf(scope.coordination, inventory, playbook.settings, opts.io.now(), runtime.logger, (line) =>
        opts.io.stderr.write(`sitefleet: warning: ${forTerminal(line)}\n`),
      )
    : undefined;
  const cpu = process.cpuUsage();
  const planStart = performance.now();
  const plan: Plan = {
    ...buildPlan({
      playbook,
      inventory,
      date,
      env: opts.io.env,
      ...(releases ? { releases } : {}),
      ...(staging ? { staging } : {}),
      ...(withholding ? { withholding } : {}),
    }),
    made: { at: new Date().toISOString(), playbook_sha256: playbookSha256(file) },
  };
  const planCpu = process.cpuUsage(cpu);
  runtime.logger.info(
    {
      steps: plan.steps.length,
      skipped: plan.skipped.length,
      cpu_ms: Math.round((planCpu.user + planCpu.system) / 1000),
      wall_ms: Math.round(performance.now() - planStart),
    },
    'plan built',
  );
  return { playbook, inventory, plan, runtime };
}

/** The theme listing, the other kinds' listings the tasks update, the site ids, and the domains and backups the tasks read first (GETs only). */
async function readFleet(runtime: Runtime, playbook: Playbook & { company: string }, opts: GlobalOptions): Promise<Fleet> {
  runtime.logger.info({ playbook: playbook.file, company: playbook.company }, 'reading the fleet');
  const readStart = performance.now();
  const reader = inventoryReader(runtime.caller);
  const inventory = await readInventory(reader, playbook.company);
  for (const kind of kindsNeeded(playbook)) await readKind(reader, inventory, kind);
  refuseUnreadKinds(playbook, inventory);
  attachSiteIds(inventory, { ...playbook.sites, ...(opts.sites ? loadSitesFile(opts.sites) : {}) });
  if (stagingNeeded(playbook)) await pairBySiteId(runtime, playbook, inventory);
  await readEachEnvironment(runtime, reader, playbook, inventory);
  const domainEnvs = readsNeeded(playbook, inventory, 'domains');
  if (domainEnvs.length > 0) await readDomains(reader, inventory, domainEnvs);
  const backupEnvs = readsNeeded(playbook, inventory, 'backups');
  if (backupEnvs.length > 0) await readBackups(reader, inventory, backupEnvs);
  runtime.logger.info(
    { environments: inventory.environments.length, listed: inventory.listed, wall_ms: Math.round(performance.now() - readStart) },
    'fleet read',
  );
  return inventory;
}

/** A task of a kind the service shows nowhere (WordPress without a site listing) cannot be planned: refused, naming the task, before anything is sent. */
function refuseUnreadKinds(playbook: Playbook & { company: string }, inventory: Fleet): void {
  const problems = playbook.tasks.flatMap((task) => {
    const kind = kindOf(task.action);
    const why = kind && inventory.listed[kind]?.unavailable;
    if (!why) return [];
    const path = `tasks.${task.index}.action`;
    return [{ file: playbook.file, ...playbook.locate(path), path, message: `${task.action} cannot be planned: ${why}; nothing was sent` }];
  });
  if (problems.length > 0) throw new InvalidInputError(problems);
}

/**
 * A kind whose company listing could not be used (kinds.ts: the service does not serve it, or its
 * entries name no environment) is read from each environment the tasks of that kind select, one read
 * each through the company's budget; the plan says why (its `inventory`), and so does the log.
 */
async function readEachEnvironment(runtime: Runtime, reader: InventoryReader, playbook: Playbook, inventory: Fleet): Promise<void> {
  for (const kind of kindsNeeded(playbook)) {
    const why = inventory.listed[kind]?.from_environments;
    if (why === undefined) continue;
    const envIds = itemReadsNeeded(playbook, inventory, kind);
    runtime.logger.warn({ kind, environments: envIds.length, why }, "reading each environment's own listing");
    await readEnvironmentItems(reader, inventory, kind, envIds);
  }
}

/**
 * Staging first pairs each live environment with its site's staging environment by site id, from the
 * service's site listing (one read, through the company's budget). Where the service does not serve
 * it, a site display name that stands for two sites cannot be paired: refused before anything is sent.
 */
async function pairBySiteId(runtime: Runtime, playbook: Playbook & { company: string }, inventory: Fleet): Promise<void> {
  const ids = await readSiteIds(runtime.caller, playbook.company);
  const task = playbook.tasks.find((t) => t.rollout?.staging_first === true)!;
  const selected = playbook.tasks.filter((t) => t.rollout?.staging_first === true).flatMap((t) => selectEnvironments(playbook, t, inventory));
  const names = new Set(selected.map((e) => e.site));
  const ambiguous = (ids ? attachListedSiteIds(inventory, ids) : ambiguousSiteNames(inventory.environments)).filter((name) => names.has(name));
  if (ambiguous.length === 0) return;
  const why = ids
    ? "the service's site listing (GET /sites) leaves out some of their environments"
    : 'the service serves no site listing (GET /sites answered 404)';
  const path = `tasks.${task.index}.rollout.staging_first`;
  throw new InvalidInputError([
    {
      file: playbook.file,
      ...playbook.locate(path),
      path,
      message: `staging first pairs live and staging by site id, and ${why}: the display name${ambiguous.length === 1 ? '' : 's'} ${ambiguous.map((n) => JSON.stringify(n)).join(', ')} stand${ambiguous.length === 1 ? 's' : ''} for more than one site; rename them apart, or leave them out of this task's target`,
    },
  ]);
}

/** Tasks whose target selected nothing, without `allow_empty`: `run` refuses them before any write. */
export function emptyTargetProblems(prepared: Pick<Prepared, 'plan' | 'playbook'>): InvalidInputError | undefined {
  const problems = prepared.plan.tasks
    .filter((t) => t.matched === 0 && !t.allow_empty)
    .map((t) => ({
      file: prepared.playbook.file,
      ...prepared.playbook.locate(`tasks.${t.index}.target`),
      path: `tasks.${t.index}.target`,
      message: `task "${t.name}" selects nothing in this fleet (set allow_empty: true if that is expected)`,
    }));
  return problems.length ? new InvalidInputError(problems) : undefined;
}
