// The measurements of issue 12: several processes sharing one company through Redis.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { busiestWindow, round, runCli, sitesFor, startRedis, startSim, writePlaybook } from './lib.mjs';

const readReport = (path) => JSON.parse(readFileSync(path, 'utf8'));

/** Operations the service failed as "blocked by another process": each was sent again, or ended the step failed. */
function blockedResends(report) {
  const journal = readFileSync(report.replace(/\.json$/, '.journal.jsonl'), 'utf8');
  const resent = journal.split('\n').filter((l) => l.includes('sent again after the environment was busy')).length;
  return resent + readReport(report).results.filter((r) => /blocked/i.test(r.reason ?? '')).length;
}

/** Arrivals per second over the span from the first arrival to the last. */
function spanRate(entries) {
  const times = entries.map((e) => e.at).sort((a, b) => a - b);
  return ((times.length - 1) / (times.at(-1) - times[0])) * 1000;
}

const ACTIONS = [
  ['backups', 'backups.create', '{ tag: "night-{{env}}" }'],
  ['php', 'php.set_version', '{ php_version: "8.3" }'],
  ['ips', 'denied_ips.set', '{ ip_list: ["203.0.113.7"] }'],
];

/**
 * Three processes, three playbooks (`lock: playbook`), one company, the same environments, one Redis,
 * against a simulator limited to R a second: together they keep under R in every window, get no
 * 429, never write to an environment another run's operation occupies, and use most of R. A fourth
 * process running the first playbook again exits 4.
 */
const N = 120;
const R = 20;
const threeSim = (dir) => startSim(['--size', String(sitesFor(N)), '--themes', '4', '--rate', `${R}/s`, '--op-delay', '500-1500', '--seed', '21'], dir);

function threePlaybooks(dir) {
  return ACTIONS.map(([name, action, body]) =>
    writePlaybook(
      dir,
      `version: 1\nname: ${name}\nsettings: { rate_limit: ${R}/s, concurrency: 8, wait: true, lock: playbook }\ntasks:\n  - { name: ${name}, action: ${action}, target: all, with: ${body} }\n`,
      `three-${name}.yaml`,
    ),
  );
}

/** The same three runs without coordination (as before): each thinks the budget is its own. */
async function threeAlone(dir) {
  const sim = await threeSim(dir);
  try {
    const results = await Promise.all(
      threePlaybooks(dir).map((file, i) =>
        runCli(['run', file, '--yes', '--report', join(dir, `alone-${i}.json`), '--state-dir', join(dir, `alone-${i}`)], sim.env),
      ),
    );
    const log = sim.log();
    const blocked = [0, 1, 2].reduce((n, i) => n + blockedResends(join(dir, `alone-${i}.json`)), 0);
    return {
      limited: log.filter((e) => e.status === 429).length,
      blocked,
      busiest: busiestWindow(
        log.map((e) => e.at),
        1000,
      ),
      exits: results.map((r) => r.code).join(','),
    };
  } finally {
    await sim.stop();
  }
}

export async function threeProcesses(dir) {
  const before = await threeAlone(dir);
  const sim = await threeSim(dir);
  const redis = await startRedis();
  try {
    const env = { ...sim.env, SITEFLEET_COORDINATION: redis.url };
    const files = threePlaybooks(dir);
    const reports = ACTIONS.map(([name]) => join(dir, `three-${name}.json`));
    // Each "machine" has its own state directory: only Redis is shared.
    const runs = files.map((file, i) => runCli(['run', file, '--yes', '--report', reports[i], '--state-dir', join(dir, `machine-${i}`)], env));
    await new Promise((r) => setTimeout(r, 1500));
    const again = await runCli(['run', files[0], '--yes', '--report', join(dir, 'three-again.json'), '--state-dir', join(dir, 'machine-3')], env);
    const results = await Promise.all(runs);
    const log = sim.log();
    const limited = log.filter((e) => e.status === 429).length;
    // While there are writes to send the budget is what limits; after the last write only the polls
    // of the last operations remain, at their predicted moments.
    const lastWrite = Math.max(...log.filter((e) => e.method !== 'GET').map((e) => e.at));
    const rate = spanRate(log.filter((e) => e.at <= lastWrite));
    const wallMs = Math.max(...log.map((e) => e.at)) - Math.min(...log.map((e) => e.at));
    const summaries = reports.map((r) => readReport(r));
    const blocked = reports.reduce((n, r) => n + blockedResends(r), 0);
    const succeeded = summaries.reduce((n, s) => n + s.summary.succeeded, 0);
    const total = summaries.reduce((n, s) => n + s.summary.total, 0);
    const busiest = busiestWindow(
      log.map((e) => e.at),
      1000,
    );
    return {
      name: `12. three processes, three playbooks, the same ${summaries[0].summary.total} environments, one Redis (${R}/s, ops 0.5–1.5 s, wait)`,
      figures: {
        requests: log.length,
        limit_per_s: R,
        busiest_window: busiest,
        achieved_per_s_while_writing: round(rate),
        ratio: round(rate / R, 3),
        whole_span_per_s: round(((log.length - 1) / wallMs) * 1000),
        answered_429: limited,
        blocked,
        succeeded: `${succeeded}/${total}`,
        exits: results.map((r) => r.code).join(','),
        same_playbook_again_exit: again.code,
        without_coordination: `429: ${before.limited}, blocked: ${before.blocked}, busiest window: ${before.busiest}, exits ${before.exits}`,
      },
      target: 'never > R in a window, zero 429, nothing blocked, together ≥ 90% of R while writing; the same playbook again exits 4',
      met: busiest <= R && limited === 0 && blocked === 0 && rate / R >= 0.9 && succeeded === total && results.every((r) => r.code === 0) && again.code === 4,
    };
  } finally {
    await redis.stop();
    await sim.stop();
  }
}

/**
 * What coordination costs one run: the same playbook with and without Redis, at the service's limit
 * (what users meet) and without one (every call then waits on a Redis round trip).
 */
export async function coordinationCost(dir) {
  const figures = {};
  for (const [label, R, N, concurrency] of [
    ['at_limit', 50, 800, 8],
    ['unlimited', undefined, 2000, 32],
  ]) {
    const rates = {};
    for (const mode of ['off', 'on']) {
      const sim = await startSim(['--size', String(sitesFor(N)), '--themes', '4', '--op-delay', '0', ...(R ? ['--rate', `${R}/s`] : [])], dir);
      try {
        const rate = R ? `${R}/s` : '100000/s';
        const pb = writePlaybook(
          dir,
          `version: 1\nname: cost\nsettings: { rate_limit: ${rate}, concurrency: ${concurrency} }\ntasks:\n  - { name: php, action: php.set_version, target: all, with: { php_version: "8.3" } }\n`,
          `cost-${label}-${mode}.yaml`,
        );
        // A Redis of its own: marks another run left (the seeded fleet is the same) are not this run's cost.
        const redis = mode === 'on' ? await startRedis() : undefined;
        const env = redis ? { ...sim.env, SITEFLEET_COORDINATION: redis.url } : sim.env;
        try {
          const res = await runCli(['run', pb, '--yes', '--report', join(dir, `cost-${label}-${mode}.json`), '--state-dir', dir], env);
          if (res.code !== 0) throw new Error(`cost ${label} ${mode} exited ${res.code}: ${res.stderr.slice(-300)}`);
        } finally {
          await redis?.stop();
        }
        rates[mode] = spanRate(sim.log().filter((e) => e.method === 'PUT'));
      } finally {
        await sim.stop();
      }
    }
    figures[`${label}_off_per_s`] = round(rates.off);
    figures[`${label}_on_per_s`] = round(rates.on);
    figures[`${label}_ratio`] = round(rates.on / rates.off, 3);
  }
  return {
    name: '13. cost of coordination: one run with Redis on vs off (800 calls at 50/s, C=8; 2,000 calls unlimited, C=32)',
    figures,
    target: 'at the service’s limit: on ≥ 97% of off; unlimited: reported',
    met: figures.at_limit_ratio >= 0.97,
  };
}
