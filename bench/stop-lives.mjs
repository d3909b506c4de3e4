// The cost of finishing lives after a stop (`--only stop-lives`): a guarded plugin night on 50 sites
// (backup_first, health checks, the cache cleared before each look, on_broken: isolate) where one
// plugin's new version breaks every site that runs it active, with max_failures: 0. The error logs
// name nothing (`--quiet-breaks`), so each broken site isolates by halving its bulk write, in as many
// rounds as it has updates to halve: the first isolation to end crosses the budget and stops the run,
// while the other broken sites are mid-isolation. A stop lets those lives finish (their restores and
// rounds) and starts no new write.
//
// Measured: from the stop (the journal's `stopped` record) to the process's exit; the lives finishing
// at the stop (a write sent before it with a record after it); and, for each, its own floor: the
// operations it still had to wait for on its environment, one after another (the one in flight at the
// stop counted from the stop), plus one page check after each cache clear. The slowest life's floor is
// the least the exit can come after the stop; the ratio says what the run added (polls, the rate
// budget, the one-clear-per-gap rule). Operations 1 s, sites 100 ms, the vendor's one clear per 10 s
// scaled as the operations are, as isolate.mjs does. Simulator times are put on the journal's clock by
// the writes: each arrives after its intent was journaled, the tightest pair giving the offset.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { request } from 'undici';
import { round, runCli, startSim, writePlaybook } from './lib.mjs';

const OP_MS = 1000;
const SITE_MS = 100;
const R = 20;
const SITES = 50;
const FLEET = ['--size', String(SITES), '--seed', '29'];
/** How many live sites the breaking version should reach: several, not most of the fleet. */
const REACH = 8;
/** Operations the simulator runs for OP_MS: what a life waits for on its environment. */
const OPERATIONS = new Set(['addManualBackup', 'bulkUpdatePlugins', 'updatePlugin', 'restoreBackup', 'clearCache']);

/** The plugin version (offered, active, not flagged vulnerable) on the number of live sites closest to REACH. */
async function scout(dir) {
  const sim = await startSim([...FLEET, '--op-delay', '0'], dir);
  try {
    const res = await runCli(['inventory', '--format', 'json'], sim.env);
    if (res.code !== 0) throw new Error(`inventory exited ${res.code}: ${res.stderr}`);
    const reach = new Map();
    const { environments } = JSON.parse(res.stdout);
    for (const env of environments.filter((e) => e.name === 'live'))
      for (const p of env.items.plugin ?? [])
        if (p.update_available && !p.update_vulnerable && p.status === 'active')
          reach.set(`${p.name}@${p.update_version}`, (reach.get(`${p.name}@${p.update_version}`) ?? 0) + 1);
    // Sites that run it active already answer broken before the night (left alone, "unhealthy before"): as few as may be.
    const before = (v) =>
      environments.filter((e) => e.name === 'live' && (e.items.plugin ?? []).some((p) => `${p.name}@${p.version}` === v && p.status === 'active')).length;
    const [breaking, sites] = [...reach]
      .filter(([, n]) => Math.abs(n - REACH) <= 3)
      .sort((a, b) => before(a[0]) - before(b[0]) || Math.abs(a[1] - REACH) - Math.abs(b[1] - REACH) || (a[0] < b[0] ? -1 : 1))[0];
    return { breaking, sites, brokenBefore: before(breaking) };
  } finally {
    await sim.stop();
  }
}

const readJsonLines = (file) =>
  readFileSync(file, 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l));

/** Which environment a request acted on: in its path, or (a cache clear) in its body. */
const envOf = (entry, ids) => ids.find((id) => entry.path.includes(id) || JSON.stringify(entry.body ?? '').includes(id));

/** Simulator ms → journal ms: every write arrived after its intent; the pair closest together gives the offset. */
function clockOffset(log, intents, writes) {
  let offset = -Infinity;
  for (const w of writes) {
    const sent = log.find((e) => e.endpoint === 'bulkUpdatePlugins' && e.path.includes(w.target.env_id));
    const intent = intents.find((r) => r.step === w.step_id);
    if (sent && intent) offset = Math.max(offset, intent.at - sent.at);
  }
  return offset;
}

/** What a life still had to wait for after `stopAt`: its environment's operations in series, and a page check after each clear. */
function floorAfter(log, envId, ids, offset, stopAt) {
  let ms = 0;
  for (const e of log.filter((x) => OPERATIONS.has(x.endpoint) && x.operation_id && envOf(x, ids) === envId)) {
    const start = e.at + offset;
    const end = start + OP_MS;
    if (end <= stopAt) continue;
    ms += end - Math.max(start, stopAt);
    if (e.endpoint === 'clearCache') ms += SITE_MS;
  }
  return ms;
}

/**
 * The sites a write went to that answered healthy before it, as their pages answer now (a site that
 * runs the breaking version already was broken before the night, and is left alone).
 */
async function pagesNow(writes) {
  const statuses = [];
  for (const w of writes.filter((r) => r.health?.url && r.health.outcome !== 'unhealthy before')) {
    const { statusCode, body } = await request(w.health.url);
    await body.dump();
    statuses.push(statusCode);
  }
  return statuses;
}

/** The night: every live site's plugin updates, guarded, isolating, stopped at the first failure. When the process exited, by the journal's clock. */
async function night(dir, sim) {
  const report = join(dir, 'stop-lives.json');
  const pb =
    `version: 1\nname: stop-lives\nsettings: { rate_limit: ${R}/s }\ntasks:\n  - name: plugins\n    action: plugins.update\n` +
    `    target: { environment: live }\n    backup_first: true\n    max_failures: 0\n` +
    // Sites broken before the night are written to, listed and not blamed (when_broken_before: update): held, each
    // would count against max_failures: 0 and stop the night before any life began, which is not what is measured.
    `    health: { url: "${sim.site_url}", attempts: 1, on_broken: isolate, when_broken_before: update }\n`;
  const startedAt = Date.now();
  const res = await runCli(['run', writePlaybook(dir, pb, 'stop-lives.yaml'), '--yes', '--report', report, '--state-dir', dir], sim.env);
  const journal = readJsonLines(report.replace(/\.json$/, '.journal.jsonl'));
  const stopped = journal.find((r) => r.t === 'stopped');
  if (!stopped) throw new Error(`the run did not stop (exit ${res.code}): ${res.stderr}`);
  const writes = JSON.parse(readFileSync(report, 'utf8')).results.filter((r) => r.request?.method === 'PUT');
  return { res, exitAt: startedAt + res.wallMs, journal, stopped, writes };
}

/** The lives finishing at the stop (sent before it, a record after it), each with its own floor; the log reads that went after it. */
function afterStop({ journal, stopped, writes }, log) {
  const intents = journal.filter((r) => r.t === 'intent');
  const sentBefore = (w) => intents.some((r) => r.step === w.step_id && r.at < stopped.at);
  const finishing = writes.filter((w) => sentBefore(w) && journal.some((r) => r.step === w.step_id && r.at > stopped.at));
  const ids = writes.map((w) => w.target.env_id);
  const offset = clockOffset(log, intents, writes);
  const floors = finishing.map((w) => ({ env: w.target.site, ms: floorAfter(log, w.target.env_id, ids, offset, stopped.at) }));
  const slowest = floors.reduce((a, b) => (b.ms > a.ms ? b : a), { env: '-', ms: 0 });
  const skipped = new Set(writes.filter((w) => w.status === 'skipped').map((w) => w.target.env_id));
  const reads = log.filter((e) => e.endpoint === 'getLogs' && e.at + offset > stopped.at);
  return { finishing, slowest, reads: reads.length, readsForUnsent: reads.filter((e) => skipped.has(envOf(e, ids))).length };
}

export async function stopLivesCost(dir) {
  const { breaking, sites: reach, brokenBefore } = await scout(dir);
  const sim = await startSim(
    [...FLEET, '--rate', `${R}/s`, '--op-delay', String(OP_MS), '--site-latency', `${SITE_MS}-${SITE_MS}`, '--clear-cache-gap', String(OP_MS)].concat([
      '--break-plugin',
      breaking,
      '--quiet-breaks',
    ]),
    dir,
  );
  try {
    const run = await night(dir, sim);
    const { res, stopped, writes } = run;
    const log = sim.log();
    const { finishing, slowest, reads, readsForUnsent } = afterStop(run, log);
    const tookMs = run.exitAt - stopped.at;
    const isolated = finishing.filter((w) => w.isolation);
    const unended = writes.filter((w) => w.status === 'accepted' || w.held?.code === 'not_looked' || w.isolation?.outcome === 'isolating');
    const broken = (await pagesNow(writes)).filter((s) => s !== 200).length;
    const ratio = tookMs / slowest.ms;
    return {
      name: `29. the cost of finishing lives after a stop (${SITES} sites, ${breaking} offered to ${reach} of them, ${brokenBefore} running it already; quiet logs, isolate, max_failures: 0; ops ${OP_MS} ms, sites ${SITE_MS} ms, ${R}/s)`,
      figures: {
        exit: res.code,
        stopped: `${stopped.kind}: ${stopped.reason}`,
        writes_sent: writes.filter((w) => w.status !== 'skipped').length,
        writes_kept_from_starting: writes.filter((w) => w.status === 'skipped').length,
        lives_finishing_at_stop: `${finishing.length} (${isolated.length} restored and isolated, in ${isolated.map((w) => w.isolation.rounds.length).join(' and ')} rounds)`,
        stop_to_exit_ms: Math.round(tookMs),
        slowest_life_floor_ms: `${Math.round(slowest.ms)} (${slowest.env}: its operations after the stop in series, ${OP_MS} ms each, + a check after each clear)`,
        ratio: round(ratio, 3),
        log_reads_after_stop: `${reads} (${readsForUnsent} before writes the stop kept from starting)`,
        lives_left_unended: unended.length,
        sites_healthy_before_answering_an_error: broken,
        answered_429: log.filter((e) => e.status === 429).length,
      },
      target:
        'the run stops on the budget (exit 3); every life finishing at the stop ends (none accepted, not_looked or isolating) and no site healthy before answers an error; stop to exit ≤ 1.5 × the slowest finishing life’s own floor',
      met: res.code === 3 && finishing.length > 0 && unended.length === 0 && broken === 0 && ratio <= 1.5,
    };
  } finally {
    await sim.stop();
  }
}
