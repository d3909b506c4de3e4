// Issue 20's measurement: theme updates confirmed through the listing instead of a poll each.
// A waiting themes.update over 500+ environments at a fixed limit, operations of 2–6 s; then the same
// with a tenth of the operations failing. Calls and times are the simulator's request log; every
// step's status is held against the simulator's own state, read afterwards through the CLI.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { round, runCli, startSim, writePlaybook } from './lib.mjs';

async function scenario(dir, { failing }) {
  const R = 20;
  const longestMs = 6000;
  const sim = await startSim(
    ['--size', '520', '--themes', '8', '--seed', '5', '--rate', `${R}/s`, '--op-delay', `2000-${longestMs}`, '--fail-operations', String(failing)],
    dir,
  );
  try {
    const name = failing > 0 ? 'failing' : 'healthy';
    const report = join(dir, `confirm-${name}.json`);
    const pb = `version: 1\nname: confirm\nsettings: { rate_limit: ${R}/s, concurrency: 8, wait: true }\ntasks:\n  - { name: themes, action: themes.update, target: all, with: { skip_vulnerable_updates: false } }\n`;
    const res = await runCli(['run', writePlaybook(dir, pb, `confirm-${name}.yaml`), '--yes', '--report', report, '--state-dir', dir], sim.env);
    const log = sim.log();
    const results = JSON.parse(readFileSync(report, 'utf8')).results.filter((r) => r.step_id !== null);
    // The simulator's state afterwards, through the CLI (read after the log was taken).
    const inventory = JSON.parse((await runCli(['inventory', '--format', 'json'], sim.env)).stdout);
    const available = new Map(inventory.environments.map((e) => [e.id, new Set(e.items.theme.filter((t) => t.update_available).map((t) => t.name))]));
    const matches = results.every((r) => {
      const done = r.request.body.themes.every((t) => !available.get(r.target.env_id).has(t.name));
      return r.status === 'succeeded' ? done : r.status === 'failed' ? !done : false;
    });
    const writes = log.filter((e) => e.method !== 'GET');
    const first = Math.min(...writes.map((e) => e.at));
    const wallMs = Math.max(...log.map((e) => e.answered_at)) - first;
    const n = results.length;
    const failed = results.filter((r) => r.status === 'failed');
    return {
      n,
      calls: log.length,
      polls: log.filter((e) => e.endpoint === 'getOperation').length,
      listingReads: log.filter((e) => e.endpoint === 'listThemes').length,
      limited: log.filter((e) => e.status === 429).length,
      wallMs,
      boundMs: (n * 1000) / R + longestMs,
      confirmedByListing: results.filter((r) => r.confirmed_by === 'listing').length,
      failed: failed.length,
      failedWithMessage: failed.filter((r) => /^operation failed: .*could not complete the change$/.test(r.reason ?? '')).length,
      matches,
      exit: res.code,
    };
  } finally {
    await sim.stop();
  }
}

export async function listingConfirm(dir) {
  const ok = await scenario(dir, { failing: 0 });
  const bad = await scenario(dir, { failing: 0.1 });
  const perOp = ok.calls / ok.n;
  const wallRatio = ok.wallMs / ok.boundMs;
  return {
    name: `16. theme updates confirmed through the listing (${ok.n} environments, ops 2–6 s, 20/s, wait; then 10% failing)`,
    figures: {
      operations: ok.n,
      calls: ok.calls,
      calls_per_operation: round(perOp, 3),
      polls: ok.polls,
      listing_reads: ok.listingReads,
      confirmed_by_listing: ok.confirmedByListing,
      wall_ms: Math.round(ok.wallMs),
      bound_ms: Math.round(ok.boundMs),
      wall_ratio: round(wallRatio, 3),
      answered_429: ok.limited,
      statuses_match_simulator: ok.matches,
      failing_variant: `${bad.failed} failed (${bad.failedWithMessage} with the service's message), statuses match: ${bad.matches}, calls/op ${round(bad.calls / bad.n, 3)}, exit ${bad.exit}`,
    },
    target:
      'calls ≤ 1.15 N; wall ≤ 1.1 × (N / limit + longest op); zero 429; every status the simulator’s; with 10% failing, every failure failed with its message',
    met:
      perOp <= 1.15 &&
      wallRatio <= 1.1 &&
      ok.limited === 0 &&
      ok.matches &&
      ok.exit === 0 &&
      bad.matches &&
      bad.failed > 0 &&
      bad.failedWithMessage === bad.failed &&
      bad.exit === 1,
  };
}
