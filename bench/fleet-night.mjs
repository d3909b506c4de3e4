/* global fetch */
// Issue 56, part 2: a fleet night that fits its window, measured. The simulator's real profile with
// its time scaled (SCALE times faster than the real service: the general window 120 per 60/SCALE s,
// creating calls 5 per the same period, operations 10–30 s, a clear of one environment every 10 s,
// new operations unknown for 2 s, polls from 1 s, all divided by SCALE), live environments with about
// nine plugin updates each, minor-only (`max_bump: minor`: every write is a pinned PUT of one plugin),
// backup_first, an HTTP check and a cache clear per environment. The floor is what the service's
// limits allow for the calls the run made (the simulator's log): general calls over 120 a period,
// creating calls over 5 a period, whichever is longer; the wall is the run's first call to its last
// answer. "Last night" is a small night of the same shape (its report is the plan's --history).
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { laneOf } from '../dist/api/endpoints.js';
import { round, runCli, startSim, writePlaybook } from './lib.mjs';
import { estimateMs } from './estimate.mjs';

/** Real seconds per simulated one: 30 keeps 500 environments' night near three minutes here. */
const SCALE = 30;
const PERIOD_MS = 60_000 / SCALE;
const GENERAL = 120;
const CREATING = 5;
/** 22 plugins an environment: about half behind, so about nine updates each (all within one major). */
const PLUGINS_PER_ENV = 22;

const scaled = (ms) => Math.max(1, Math.round(ms / SCALE));
const range = (min, max) => `${scaled(min)}-${scaled(max)}`;

const simArgs = [
  ...['--profile', 'real', '--seed', '56', '--plugins-per-env', String(PLUGINS_PER_ENV)],
  ...['--rate', `${GENERAL}/${PERIOD_MS / 1000}s`, '--create-rate', `${CREATING}/${PERIOD_MS / 1000}s`],
  ...['--op-delay', range(10_000, 30_000), '--op-visible-after', String(scaled(2000))],
  ...['--site-latency', range(300, 600), '--clear-cache-gap', String(scaled(10_000))],
];
const flags = (dir) => ['--poll-interval', String(scaled(1000)), '--state-dir', dir];

const playbook = (url) =>
  `version: 1\nname: fleet-night\nsettings: { rate_limit: ${GENERAL}/${PERIOD_MS / 1000}s, create_rate_limit: ${CREATING}/${PERIOD_MS / 1000}s }\n` +
  `tasks:\n  - name: plugins\n    action: plugins.update\n    target: { environment: live }\n    with: { max_bump: minor }\n` +
  `    backup_first: true\n    health: { url: "${url}", attempts: 1 }\n`;

/** Last night's report: a small night of the same shape, for the estimate's operation times. */
async function history(dir) {
  const file = join(dir, 'fleet-night-history.json');
  const night = await startSim(['--size', '12', ...simArgs], dir);
  try {
    const res = await runCli(
      ['run', writePlaybook(dir, playbook(night.site_url), 'fleet-night-history.yaml'), '--yes', '--report', file, ...flags(dir)],
      night.env,
    );
    if (res.code !== 0) throw new Error(`fleet night: the history run exited ${res.code}: ${res.stderr}`);
  } finally {
    await night.stop();
  }
  return file;
}

/** What the run's calls were, from the simulator's log of it: counted calls per lane, and its span. */
function tally(entries, sites) {
  const counted = entries.filter((e) => e.endpoint && e.status !== 429 && e.status !== 0);
  const creating = counted.filter((e) => laneOf(e.endpoint) === 'create').length;
  const by = (name) => counted.filter((e) => e.endpoint === name).length;
  const start = Math.min(...entries.map((e) => e.at));
  const end = Math.max(...entries.map((e) => e.answered_at));
  const wallMs = end - start;
  // What the estimate estimates: from the first write to the last answer.
  const firstWrite = Math.min(...entries.filter((e) => e.method !== 'GET').map((e) => e.at));
  const floorMs = Math.max(counted.length / GENERAL, creating / CREATING) * PERIOD_MS;
  const writes = by('updatePlugin');
  return {
    calls: counted.length,
    creating,
    refused: entries.filter((e) => e.status === 429).length,
    writes,
    writesPerEnv: writes / sites,
    callsPerWrite: counted.length / writes,
    polls: by('getOperation'),
    clearsPerEnv: by('clearCache') / sites,
    wallMs,
    writingMs: end - firstWrite,
    // The share of the general limit the middle of the night used (20% to 80% of its wall): where the
    // lanes should be full, what latency, the machine's load and the lives' own waits leave unused.
    midShare: counted.filter((e) => e.at >= start + 0.2 * wallMs && e.at < start + 0.8 * wallMs).length / (((0.6 * wallMs) / PERIOD_MS) * GENERAL),
    floorMs,
    generalLaneMs: (counted.length / GENERAL) * PERIOD_MS,
    creatingLaneMs: (creating / CREATING) * PERIOD_MS,
  };
}

/**
 * Page looks per environment, from the access logs of a sample of the written environments (the
 * simulator's request log holds API calls only; site pages are served apart and logged per site).
 */
async function looksOf(sim, log) {
  const envs = [...new Set(log.filter((e) => e.endpoint === 'clearCache').map((e) => e.body?.environment_id))].filter(Boolean).slice(0, 10);
  let looks = 0;
  for (const env of envs) {
    const res = await fetch(`${sim.base_url}/v2/sites/environments/${env}/logs?file_name=access&lines=1000`, {
      headers: { authorization: `Bearer ${sim.token}` },
    });
    const text = JSON.stringify(await res.json());
    looks += (text.match(/\\"GET /g) ?? []).length;
  }
  return envs.length ? looks / envs.length : undefined;
}

/** One night over `sites` sites' live environments: plan (the estimate), then the run, measured. */
export async function fleetNightOf(dir, sites, historyFile) {
  const sim = await startSim(['--size', String(sites), ...simArgs], dir);
  try {
    const file = writePlaybook(dir, playbook(sim.site_url), `fleet-night-${sites}.yaml`);
    const plan = await runCli(['plan', file, '--history', historyFile, ...flags(dir)], sim.env);
    if (plan.code !== 0) throw new Error(`fleet night: plan exited ${plan.code}: ${plan.stderr}`);
    const estimate = estimateMs(plan.stdout);
    // The simulator writes its log as a stream: the plan's last lines land a moment after it exits.
    await new Promise((resolve) => setTimeout(resolve, 500));
    const before = sim.log().length;
    const run = await runCli(['run', file, '--yes', '--report', join(dir, `fleet-night-${sites}.json`), ...flags(dir)], sim.env, {
      timeoutMs: 900_000,
    });
    const log = sim.log().slice(before);
    const looksPerEnv = await looksOf(sim, log);
    // The machine's load over the run: the client and the simulator share two cores with whatever else runs.
    return { sites, estimate, exit: run.code, looksPerEnv, load: loadavg()[1], ...tally(log, sites) };
  } finally {
    await sim.stop();
  }
}

const secs = (ms) => `${round(ms / 1000, 1)} s`;
/** A scaled span as the real service would take it. */
const real = (ms) => {
  const min = Math.round((ms * SCALE) / 60_000);
  return `${Math.floor(min / 60)}h${String(min % 60).padStart(2, '0')}m`;
};

export async function fleetNight(dir) {
  const sizes = (process.env.SITEFLEET_BENCH_FLEET_NIGHT ?? '500').split(',').map(Number);
  const historyFile = await history(dir);
  const nights = [];
  for (const sites of sizes) nights.push(await fleetNightOf(dir, sites, historyFile));
  const figures = {};
  for (const n of nights) {
    const ratio = n.wallMs / n.floorMs;
    const est = n.estimate / n.writingMs;
    figures[`${n.sites}_environments`] =
      `${n.writes} writes (${round(n.writesPerEnv, 1)}/env), ${n.calls} calls (${n.creating} creating, ${n.polls} polls; ${n.refused} refused), ` +
      `${round(n.callsPerWrite, 2)} calls/write, ${round(n.clearsPerEnv, 2)} clears/env, ${n.looksPerEnv === undefined ? '?' : round(n.looksPerEnv, 2)} looks/env; ` +
      `wall ${secs(n.wallMs)} (real ${real(n.wallMs)}), floor ${secs(n.floorMs)} (general ${secs(n.generalLaneMs)}, creating ${secs(n.creatingLaneMs)}; real ${real(n.floorMs)}), ` +
      `wall/floor ${round(ratio, 3)}, middle of the night at ${round(n.midShare * 100, 1)}% of the general limit; estimate ${secs(n.estimate)} (real ${real(n.estimate)}) against ${secs(n.writingMs)} from the first write, ratio ${round(est, 3)}; exit ${n.exit}; load average ${round(n.load, 1)}`;
  }
  const met = nights.every((n) => n.wallMs / n.floorMs <= 1.15 && Math.abs(n.estimate / n.writingMs - 1) <= 0.15 && n.exit === 0 && n.clearsPerEnv === 1);
  return {
    name: `32. a fleet night (${sizes.join(', ')} live environments × ~9 minor plugin updates, pinned; backup_first, HTTP check, cache clear; real profile ×${SCALE}: ${GENERAL}/${PERIOD_MS / 1000}s, creating ${CREATING}/${PERIOD_MS / 1000}s; plan --history a small night)`,
    figures,
    nights,
    target: 'wall ≤ 1.15 × the floor the limits set; estimate within 0.85–1.15 of the run (first write to last answer); one clear an environment; exit 0',
    met,
  };
}
