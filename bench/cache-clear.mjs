// Issue 46, part 4: what clearing the page cache costs a guarded write. The same guarded rollout
// twice, against two fresh simulators of the same fleet (sites 50–150 ms, operations 1–3 s, the
// cache clear's operation included): once with `health.clear_cache: false`, once with the default
// (each write followed by `POST /sites/tools/clear-cache`, its operation followed to its end, then
// the check). Figures: API calls per guarded write and the rollout's seconds, as ratios in one run.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { round, runCli, sitesFor, startSim, writePlaybook } from './lib.mjs';

/** First intent to the journal's end: the rollout itself, looks after included, without planning. */
function rolloutMs(journalPath) {
  const records = readFileSync(journalPath, 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l));
  return records.findLast((r) => r.t === 'end').at - records.find((r) => r.t === 'intent').at;
}

async function rollout(dir, clear, N, R) {
  const sim = await startSim(
    ['--size', String(sitesFor(N)), '--themes', '4', '--rate', `${R}/s`, '--op-delay', '1000-3000', '--site-latency', '50-150', '--seed', '46'],
    dir,
  );
  try {
    const name = clear ? 'on' : 'off';
    const report = join(dir, `cache-${name}.json`);
    const pb = `version: 1\nname: cache-${name}\nsettings: { rate_limit: ${R}/s, concurrency: 8 }\ntasks:\n  - { name: php, action: php.set_version, target: all, with: { php_version: "8.3" }, rollout: { canary: 1, waves: ["25%", "100%"] }, health: { url: "${sim.site_url}", clear_cache: ${clear} } }\n`;
    const res = await runCli(['run', writePlaybook(dir, pb, `cache-${name}.yaml`), '--yes', '--report', report, '--state-dir', dir], sim.env);
    const log = sim.log().filter((e) => e.path.startsWith('/v2/'));
    const results = JSON.parse(readFileSync(report, 'utf8')).results.filter((r) => r.step_id !== null);
    const clearOps = new Set(results.map((r) => r.health?.cache?.operation_id).filter(Boolean));
    return {
      exit: res.code,
      ms: rolloutMs(report.replace(/\.json$/, '.journal.jsonl')),
      writes: results.length,
      calls: log.length,
      clears: log.filter((e) => e.endpoint === 'clearCache').length,
      clearPolls: log.filter((e) => e.endpoint === 'getOperation' && clearOps.has(e.operation_id)).length,
      refused: log.filter((e) => e.status === 429).length,
      cleared: results.filter((r) => r.health?.cache?.outcome === 'cleared').length,
      healthy: results.filter((r) => r.status === 'succeeded' && r.health?.outcome === 'healthy').length,
    };
  } finally {
    await sim.stop();
  }
}

export async function cacheClearCost(dir) {
  const N = 60;
  const R = 20;
  const off = await rollout(dir, false, N, R);
  const on = await rollout(dir, true, N, R);
  const perWrite = (run) => run.calls / run.writes;
  const extraCalls = perWrite(on) - perWrite(off);
  const ratio = on.ms / off.ms;
  // A clear is one more operation, in series after the write's, on each environment: each of the
  // three waves (canary, 25%, 100%) should end about one operation later, the longest drawn being 3 s.
  const addedPerWave = (on.ms - off.ms) / 3;
  const longestOpMs = 3000;
  return {
    name: `22. the cache clear after each guarded write (${on.writes} environments, sites 50–150 ms, ops 1–3 s, ${R}/s, canary + 2 waves)`,
    figures: {
      guarded_writes: on.writes,
      calls_per_write_off: round(perWrite(off), 2),
      calls_per_write_on: round(perWrite(on), 2),
      extra_calls_per_write: round(extraCalls, 2),
      clears: on.clears,
      polls_per_clear: round(on.clearPolls / Math.max(1, on.clears), 2),
      refused_429: on.refused,
      rollout_ms_off: Math.round(off.ms),
      rollout_ms_on: Math.round(on.ms),
      time_ratio: round(ratio, 3),
      added_ms_per_wave: Math.round(addedPerWave),
      added_per_wave_over_longest_op: round(addedPerWave / longestOpMs, 2),
      cleared: `${on.cleared}/${on.writes}`,
      healthy: `${off.healthy}/${off.writes}, ${on.healthy}/${on.writes}`,
      exits: `${off.exit}, ${on.exit}`,
    },
    target:
      'one clear per guarded write, none refused, each seen to end: ≤ 3 API calls more per guarded write (the clear and its polls); each wave ≤ 1.6 × the longest operation (3 s) longer, as one more operation in series per environment costs; every site cleared and healthy',
    met:
      off.exit === 0 &&
      on.exit === 0 &&
      on.clears === on.writes &&
      off.clears === 0 &&
      on.refused === 0 &&
      extraCalls <= 3 &&
      addedPerWave <= 1.6 * longestOpMs &&
      on.cleared === on.writes &&
      on.healthy === on.writes &&
      off.healthy === off.writes,
  };
}
