// Issue 47's measurements: plugins, the fleet's largest update surface. The plan of 2,000 environments
// × 25 plugins (50,000 installs) from the company plugin listing, in CPU, wall time and the planning
// process's peak memory; the API calls a waiting plugin night makes per plugin write, the plan's reads,
// the operations' polls and the read-back of every write (issue 55) included, the read-back also counted
// apart; and the plan's cost where the service serves no company plugin
// listing (one read per environment, through the rate budget). Calls are the simulator's request log.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { CLI, logRecord, round, run, runCli, sitesFor, startSim, writePlaybook } from './lib.mjs';

const MAX_RSS = fileURLToPath(new URL('./max-rss.mjs', import.meta.url));
const PLUGINS_PER_ENV = 25;

const pluginPlaybook = (name, rate, concurrency, withBlock = '', settings = '') =>
  `version: 1\nname: ${name}\nsettings: { rate_limit: ${rate}, concurrency: ${concurrency}${settings} }\ntasks:\n  - { name: plugins, action: plugins.update, target: all${withBlock ? `, with: ${withBlock}` : ''} }\n`;

/**
 * `sitefleet plan` in a process of its own: its log's read and plan lines, its wall time and peak RSS;
 * `tally(step)` names a class of step to count (`byClass`), e.g. the version a core command names.
 */
export async function planProcess(dir, sim, name, playbook, tally) {
  const logFile = join(dir, `${name}.log`);
  const rssFile = join(dir, `${name}.rss`);
  const planFile = join(dir, `${name}.plan.json`);
  const args = ['--import', MAX_RSS, CLI, 'plan', writePlaybook(dir, playbook, `${name}.yaml`), '--log-file', logFile, '--out', planFile];
  const res = await run(process.execPath, args, { ...sim.env, SITEFLEET_BENCH_MAX_RSS: rssFile });
  if (res.code !== 0) throw new Error(`${name}: plan exited ${res.code}: ${res.stderr}`);
  const read = logRecord(logFile, 'fleet read');
  const plan = logRecord(logFile, 'plan built');
  const steps = JSON.parse(readFileSync(planFile, 'utf8')).steps;
  return {
    environments: read.environments,
    readMs: read.wall_ms,
    planCpuMs: plan.cpu_ms,
    planWallMs: plan.wall_ms,
    writes: steps.length,
    bulk: steps.filter((s) => s.endpoint === 'bulkUpdatePlugins').length,
    pinned: steps.filter((s) => s.endpoint === 'updatePlugin').length,
    ...(tally ? { byClass: steps.reduce((n, s) => ({ ...n, [tally(s)]: (n[tally(s)] ?? 0) + 1 }), {}) } : {}),
    processMs: Math.round(res.wallMs),
    maxRssMb: Number(readFileSync(rssFile, 'utf8')),
  };
}

/** Plugins installed across the fleet, as the CLI reads them from the simulator. */
async function installs(sim) {
  const res = await runCli(['inventory', '--format', 'json'], sim.env);
  if (res.code !== 0) throw new Error(`inventory exited ${res.code}: ${res.stderr}`);
  return JSON.parse(res.stdout).environments.reduce((n, e) => n + (e.items.plugin?.length ?? 0), 0);
}

const endpointCount = (log, endpoint) => log.filter((e) => e.endpoint === endpoint).length;

export async function pluginScale(dir) {
  const sim = await startSim(['--size', String(sitesFor(2000)), '--plugins-per-env', String(PLUGINS_PER_ENV), '--op-delay', '0'], dir);
  try {
    // Bulk updates (one write per environment), then a policy that judges each version (pinned writes).
    const bulk = await planProcess(dir, sim, 'plugin-scale-bulk', pluginPlaybook('plugin-scale', '2000/s', 64));
    const policy = await planProcess(dir, sim, 'plugin-scale-policy', pluginPlaybook('plugin-scale', '2000/s', 64, '{ max_bump: minor }'));
    const log = sim.log();
    const total = await installs(sim);
    const runs = { bulk, policy };
    const within = (r) => r.planCpuMs <= 3000 && r.planWallMs <= 3000 && r.maxRssMb <= 400;
    return {
      name: `23. plugin plan at scale (${bulk.environments} environments × ${PLUGINS_PER_ENV} plugins; plugins.update without a policy, then max_bump: minor)`,
      figures: {
        environments: bulk.environments,
        installs: total,
        ...Object.fromEntries(
          Object.entries(runs).map(([k, r]) => [
            k,
            `plan ${r.planCpuMs} ms CPU, ${r.planWallMs} ms wall; read ${r.readMs} ms; peak RSS ${r.maxRssMb} MB; ` +
              `${r.writes} writes (${r.bulk} bulk, ${r.pinned} pinned); process ${r.processMs} ms`,
          ]),
        ),
        company_listing_reads_per_plan: endpointCount(log, 'listPlugins') / 2,
        environment_listing_reads: endpointCount(log, 'listEnvironmentPlugins'),
      },
      runs,
      target: 'plan ≤ 3 s (CPU and wall, after the listings are read), ≤ 400 MB peak RSS for the planning process; the company listing read, no environment’s',
      met:
        bulk.environments >= 2000 &&
        total >= 50000 &&
        within(bulk) &&
        within(policy) &&
        bulk.bulk === bulk.writes &&
        policy.pinned > 0 &&
        endpointCount(log, 'listEnvironmentPlugins') === 0,
    };
  } finally {
    await sim.stop();
  }
}

/** Did each step end as the simulator's state says (read through the CLI after the run)? */
function statusesMatch(results, inventory) {
  const plugins = new Map(inventory.environments.map((e) => [e.id, new Map((e.items.plugin ?? []).map((p) => [p.name, p]))]));
  return results.every((r) => {
    const installed = plugins.get(r.target.env_id);
    const body = r.request.body;
    const done = body.plugins
      ? body.plugins.every((p) => installed.get(p.name)?.update_available === false)
      : installed.get(body.name)?.version === body.update_version;
    return r.status === 'succeeded' ? done : r.status === 'failed' ? !done : false;
  });
}

/** The mean time between two writes to one environment (pinned updates go one after another on each). */
function meanWriteGap(writes) {
  const byEnv = new Map();
  for (const e of writes) {
    const envId = e.path.split('/')[4];
    if (!byEnv.has(envId)) byEnv.set(envId, []);
    byEnv.get(envId).push(e);
  }
  const gaps = [...byEnv.values()].flatMap((w) => w.slice(1).map((e, i) => e.at - w[i].at));
  return gaps.length > 0 ? gaps.reduce((a, b) => a + b, 0) / gaps.length : undefined;
}

/** A waiting night of one item update over the simulator's fleet: every API call it made, by kind. */
async function night(dir, { name, action, withBlock, simArgs }) {
  const R = 20;
  const sim = await startSim([...simArgs, '--rate', `${R}/s`, '--op-delay', '2000-6000'], dir);
  try {
    const report = join(dir, `${name}.json`);
    const pb = `version: 1\nname: ${name}\nsettings: { rate_limit: ${R}/s, concurrency: 8, wait: true }\ntasks:\n  - { name: items, action: ${action}, target: all${withBlock ? `, with: ${withBlock}` : ''} }\n`;
    const res = await runCli(['run', writePlaybook(dir, pb, `${name}.yaml`), '--yes', '--report', report, '--state-dir', dir], sim.env);
    const log = sim.log();
    const results = JSON.parse(readFileSync(report, 'utf8')).results.filter((r) => r.step_id !== null);
    const writes = log.filter((e) => e.method !== 'GET');
    const reads = log.filter((e) => e.method === 'GET');
    const first = Math.min(...writes.map((e) => e.at));
    const figures = {
      writes: writes.length,
      calls: log.length,
      polls: endpointCount(log, 'getOperation'),
      listingReads: ['listThemes', 'listPlugins', 'listEnvironmentPlugins'].reduce((n, ep) => n + endpointCount(log, ep), 0),
      otherReads: reads.length - endpointCount(log, 'getOperation'),
      limited: log.filter((e) => e.status === 429).length,
      wallMs: Math.max(...log.map((e) => e.answered_at)) - first,
      steps: results.length,
      writeGapMs: meanWriteGap(writes),
      succeeded: results.filter((r) => r.status === 'succeeded').length,
      exit: res.code,
    };
    figures.otherReads -= figures.listingReads;
    if (action === 'plugins.update') {
      // The read-back: each written environment's own plugin listing, read once its writes ended (the plan reads none).
      figures.readBacks = log.filter((e) => e.endpoint === 'listEnvironmentPlugins' && e.at >= first).length;
      figures.writtenEnvs = new Set(writes.map((e) => e.path.split('/')[4])).size;
      const inventory = JSON.parse((await runCli(['inventory', '--format', 'json'], sim.env)).stdout);
      figures.matches = statusesMatch(results, inventory);
      figures.pluginsUpdated = results.reduce((n, r) => n + (r.request.body.plugins?.length ?? 1), 0);
    }
    return figures;
  } finally {
    await sim.stop();
  }
}

const perWrite = (n) => round(n.calls / n.writes, 3);
/** Calls per write besides the read-back (what a night cost before every item write was read back). */
const perWriteUnread = (n) => round((n.calls - (n.readBacks ?? 0)) / n.writes, 3);
const readBackWords = (n) =>
  n.readBacks === undefined
    ? ''
    : `; read-back ${n.readBacks} reads for ${n.writtenEnvs} written environments = ${round(n.readBacks / n.writes, 3)} calls per write (${perWriteUnread(n)} without it)`;
const describeNight = (n) =>
  `${perWrite(n)} calls per write: ${n.calls} calls = ${n.writes} writes + ${n.polls} polls + ${n.listingReads} listing reads + ${n.otherReads} other reads${readBackWords(n)}; ` +
  `${n.pluginsUpdated ?? '-'} plugins updated; ${n.succeeded}/${n.steps} succeeded; wall ${Math.round(n.wallMs)} ms; ${n.limited} × 429; exit ${n.exit}`;

export async function pluginCalls(dir) {
  // Ops of 2–6 s at 20/s, as scenario 16 measures theme updates; 25 plugins an environment.
  const fleet = ['--size', '200', '--seed', '5', '--plugins-per-env', String(PLUGINS_PER_ENV)];
  const bulk = await night(dir, { name: 'plugin-night-bulk', action: 'plugins.update', simArgs: fleet });
  // A policy judges each version: pinned writes, one per plugin, in series on each environment.
  const pinned = await night(dir, {
    name: 'plugin-night-pinned',
    action: 'plugins.update',
    withBlock: '{ max_bump: minor }',
    simArgs: ['--size', '12', '--seed', '5', '--plugins-per-env', String(PLUGINS_PER_ENV)],
  });
  const themes = await night(dir, { name: 'theme-night', action: 'themes.update', withBlock: '{ skip_vulnerable_updates: false }', simArgs: fleet });
  // Every plugin write is read back, one read of each written environment's own listing: counted apart from the 2.3.
  const ok = (n) => perWriteUnread(n) <= 2.3 && n.readBacks === n.writtenEnvs && n.limited === 0 && n.exit === 0 && n.matches && n.succeeded === n.steps;
  return {
    name: '24. API calls per plugin write, plan and waiting included (plugins.update, wait: true, ops 2–6 s, 20/s; bulk, then max_bump: minor)',
    figures: {
      bulk: describeNight(bulk),
      pinned: describeNight(pinned),
      polls_per_operation: `${round(bulk.polls / bulk.writes, 3)} bulk, ${round(pinned.polls / pinned.writes, 3)} pinned`,
      pinned_write_gap_ms: `${Math.round(pinned.writeGapMs)} between two writes to one environment (operations 2–6 s, mean 4 s)`,
      theme_twin_same_fleet: `${describeNight(themes)} (confirmed through the company listing)`,
    },
    runs: { bulk, pinned, themes },
    target:
      '≤ 2.3 API calls per plugin write (listing reads, writes and operation polls) besides the read-back, which is one read of each written environment’s own listing; zero 429; every step succeeded, as the simulator’s state says',
    met: ok(bulk) && ok(pinned),
  };
}

export async function pluginFallback(dir) {
  const R = 200;
  const sim = await startSim(
    ['--size', String(sitesFor(2000)), '--plugins-per-env', String(PLUGINS_PER_ENV), '--plugin-listing', 'absent', '--rate', `${R}/s`, '--op-delay', '0'],
    dir,
  );
  try {
    const r = await planProcess(dir, sim, 'plugin-fallback', pluginPlaybook('plugin-fallback', `${R}/s`, 16));
    const log = sim.log();
    const perEnv = endpointCount(log, 'listEnvironmentPlugins');
    const floorMs = ((log.length - 1) / R) * 1000;
    return {
      name: `25. plugin plan without a company plugin listing (${r.environments} environments × ${PLUGINS_PER_ENV} plugins, listing 404, ${R}/s)`,
      figures: {
        environments_selected: r.environments,
        environment_listing_reads: perEnv,
        company_listing_404: log.filter((e) => e.endpoint === 'listPlugins' && e.status === 404).length,
        calls: log.length,
        read_ms: r.readMs,
        least_read_ms: Math.round(floorMs),
        read_ratio: round(r.readMs / floorMs, 3),
        at_default_budget_120_per_min: `${round(log.length / 2 / 60, 1)} min (calls / 2 per s)`,
        plan: `${r.planCpuMs} ms CPU, ${r.planWallMs} ms wall; peak RSS ${r.maxRssMb} MB; ${r.writes} writes`,
        answered_429: log.filter((e) => e.status === 429).length,
      },
      run: r,
      target: 'one read per environment selected, and no more; reads ≤ 1.15 × calls / rate; plan ≤ 3 s, ≤ 400 MB',
      met:
        perEnv === r.environments &&
        r.readMs / floorMs <= 1.15 &&
        r.planCpuMs <= 3000 &&
        r.planWallMs <= 3000 &&
        r.maxRssMb <= 400 &&
        log.every((e) => e.status !== 429),
    };
  } finally {
    await sim.stop();
  }
}
