// Issue 49's measurements: WordPress core, the kind with no endpoint of its own. A core update is a
// WP-CLI command (`wp core update --version=X`), its operation waited for (core.update always waits),
// and the version read back from the site listing, one read for the task: what does that cost in API
// calls per update on 2,000 environments, and what does the plan of that fleet cost in CPU, wall time
// and the planning process's peak memory? Calls are the simulator's request log.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { planProcess } from './plugins.mjs';
import { round, runCli, sitesFor, startSim, writePlaybook } from './lib.mjs';

// Every environment runs an older release: 6.7.2 came out tonight and none runs it yet. The fleet runs
// 6.3.1 to 6.7.1 (about 56% the newest of them, 25% the one before, the rest older).
const RELEASES = ['--core-versions', '6.3.1,6.4.3,6.5.5,6.6.2,6.7.1', '--core-latest', '6.7.2'];
const NEW = '6.7.2';

const corePlaybook = (name, rate, concurrency, withBlock) =>
  `version: 1\nname: ${name}\nsettings: { rate_limit: ${rate}, concurrency: ${concurrency} }\ntasks:\n  - { name: wordpress, action: core.update, target: all, with: ${withBlock} }\n`;

/** The release a step's command installs (`wp core update --version=X` → X). */
const commandVersion = (step) => /--version=(\S+)$/.exec(step.body?.wp_command ?? '')?.[1] ?? step.endpoint;

const endpointCount = (log, endpoint) => log.filter((e) => e.endpoint === endpoint).length;
/** Calls by endpoint, each count divided by `per` (the runs the log holds). */
function byEndpoint(log, per = 1) {
  const counts = {};
  for (const e of log) counts[e.endpoint] = (counts[e.endpoint] ?? 0) + 1 / per;
  return counts;
}

/** The environments that run WordPress, and the release each runs, as `inventory` reads them from the simulator. */
async function coreInventory(sim) {
  const res = await runCli(['inventory', '--format', 'json'], sim.env);
  if (res.code !== 0) throw new Error(`inventory exited ${res.code}: ${res.stderr}`);
  const envs = JSON.parse(res.stdout).environments;
  return new Map(envs.flatMap((e) => (e.items.core?.[0] ? [[e.id, e.items.core[0].version]] : [])));
}

export async function corePlan(dir) {
  const sim = await startSim(['--size', String(sitesFor(2000)), ...RELEASES, '--op-delay', '0'], dir);
  try {
    // Tonight's release everywhere (the allow-list names it: no environment runs it yet), then the
    // minor-only night of playbooks/core-updates.yaml (max_bump: patch; only 6.7.1 → 6.7.2 is one).
    const every = await planProcess(dir, sim, 'core-plan-every', corePlaybook('core-plan', '2000/s', 64, `{ versions: ["${NEW}"] }`), commandVersion);
    const patch = await planProcess(
      dir,
      sim,
      'core-plan-patch',
      corePlaybook('core-plan', '2000/s', 64, `{ versions: ["${NEW}"], max_bump: patch }`),
      commandVersion,
    );
    const log = sim.log();
    const versions = await coreInventory(sim);
    const onBranch = [...versions.values()].filter((v) => v.startsWith('6.7.')).length;
    const runs = { every, patch };
    const within = (r) => r.planCpuMs <= 3000 && r.planWallMs <= 3000 && r.maxRssMb <= 400;
    return {
      name: `26. core plan at scale (${every.environments} environments, none on ${NEW} yet; core.update to ${NEW}, then max_bump: patch)`,
      figures: {
        environments: every.environments,
        running_wordpress: versions.size,
        ...Object.fromEntries(
          Object.entries(runs).map(([k, r]) => [
            k,
            `plan ${r.planCpuMs} ms CPU, ${r.planWallMs} ms wall; read ${r.readMs} ms; peak RSS ${r.maxRssMb} MB; ` +
              `${r.writes} commands (${JSON.stringify(r.byClass)}); process ${r.processMs} ms`,
          ]),
        ),
        site_listing_reads_per_plan: endpointCount(log, 'listSites') / 2,
        // A core task's plan reads the company theme listing as well (the inventory's base), one read a plan.
        other_reads_per_plan: JSON.stringify(
          byEndpoint(
            log.filter((e) => e.endpoint !== 'listSites'),
            2,
          ),
        ),
      },
      runs,
      target:
        'plan ≤ 3 s (CPU and wall, after the listing is read), ≤ 400 MB peak RSS for the planning process; one site-listing read a plan; one command for each environment behind (max_bump: patch: each on 6.7.1)',
      met:
        every.environments >= 2000 &&
        within(every) &&
        within(patch) &&
        every.writes === versions.size &&
        every.byClass[NEW] === every.writes &&
        patch.writes === onBranch &&
        patch.byClass[NEW] === patch.writes &&
        endpointCount(log, 'listSites') === 2,
    };
  } finally {
    await sim.stop();
  }
}

export async function coreCalls(dir) {
  // Operations of 2–6 s as the theme and plugin nights have, on 2,000 environments at 50/s.
  const R = 50;
  const sim = await startSim(['--size', String(sitesFor(2000)), ...RELEASES, '--rate', `${R}/s`, '--op-delay', '2000-6000'], dir);
  try {
    const report = join(dir, 'core-night.json');
    const pb = corePlaybook('core-night', `${R}/s`, 8, `{ versions: ["${NEW}"] }`);
    const res = await runCli(['run', writePlaybook(dir, pb, 'core-night.yaml'), '--yes', '--report', report, '--state-dir', dir], sim.env);
    const log = sim.log();
    const results = JSON.parse(readFileSync(report, 'utf8')).results.filter((r) => r.step_id !== null);
    const after = await coreInventory(sim);
    const commands = endpointCount(log, 'runWpCliCommand');
    // Each update is two commands: `wp core update`, then its database step (`wp core update-db`).
    const updates = results.length;
    const databaseSteps = results.filter((r) => r.database?.[0]?.status === 'succeeded').length;
    const polls = endpointCount(log, 'getOperation');
    const listing = endpointCount(log, 'listSites');
    const others = log.length - commands - polls - listing;
    const first = Math.min(...log.filter((e) => e.method !== 'GET').map((e) => e.at));
    const wallMs = Math.max(...log.map((e) => e.answered_at)) - first;
    const succeeded = results.filter((r) => r.status === 'succeeded');
    // Each step names the release it read back; it must be the one the simulator's state says.
    const readBack = succeeded.every((r) => r.runs?.[0]?.version === NEW && after.get(r.target.env_id) === NEW);
    const figures = {
      environments: after.size,
      updates_sent: updates,
      database_steps_done: databaseSteps,
      calls: log.length,
      calls_per_update: round(log.length / updates, 3),
      breakdown: `${commands} commands (updates and database steps) + ${polls} operation polls + ${listing} site-listing reads + ${others} other calls ${JSON.stringify(
        byEndpoint(log.filter((e) => !['runWpCliCommand', 'getOperation', 'listSites'].includes(e.endpoint))),
      )}`,
      polls_per_operation: round(polls / commands, 3),
      read_back_calls_per_update: round((listing - 1) / updates, 4),
      least_calls_per_update: `${round((2 * commands + 2) / updates, 3)} (two commands and a poll each, the update and its database step; a listing read to plan and one to read back)`,
      succeeded: `${succeeded.length}/${results.length}, each naming ${NEW} read back: ${readBack}`,
      on_new_release_after: [...after.values()].filter((v) => v === NEW).length,
      wall_ms: Math.round(wallMs),
      least_wall_ms: Math.round((log.length / R) * 1000),
      answered_429: log.filter((e) => e.status === 429).length,
      exit: res.code,
    };
    return {
      name: `27. API calls per core update, plan, waiting and read-back included (${after.size} environments, all behind; core.update to ${NEW}, ops 2–6 s, ${R}/s)`,
      figures,
      target:
        '≤ 4.6 API calls per core update (the update and its database step, their operation polls, site-listing reads); every database step done; the read-back one site-listing read for the task; zero 429; every step succeeded, naming the release the simulator runs',
      met:
        figures.calls_per_update <= 4.6 &&
        databaseSteps === updates &&
        listing === 2 &&
        figures.answered_429 === 0 &&
        res.code === 0 &&
        succeeded.length === results.length &&
        commands === 2 * updates &&
        readBack &&
        figures.on_new_release_after === after.size,
    };
  } finally {
    await sim.stop();
  }
}
