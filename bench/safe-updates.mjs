// Issue 19's measurement: what health checks cost a rollout. The same rollout twice, against two
// fresh simulators of the same fleet whose sites answer in 50–150 ms: once without `health:`, once
// with it. The checks go to the sites, never to the API: the API sees only one domain read per
// environment more.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { round, runCli, sitesFor, startSim, writePlaybook } from './lib.mjs';

/** First intent to the journal's end: the rollout itself, after-checks included, without planning. */
function rolloutMs(journalPath) {
  const records = readFileSync(journalPath, 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l));
  const first = records.find((r) => r.t === 'intent').at;
  const end = records.findLast((r) => r.t === 'end').at;
  return end - first;
}

export async function healthChecks(dir) {
  const N = 80;
  const R = 20;
  const runs = {};
  for (const health of [false, true]) {
    const sim = await startSim(
      ['--size', String(sitesFor(N)), '--themes', '4', '--rate', `${R}/s`, '--op-delay', '1000-3000', '--site-latency', '50-150', '--seed', '19'],
      dir,
    );
    try {
      const name = health ? 'with' : 'without';
      const report = join(dir, `health-${name}.json`);
      // The checks alone: the cache clear that follows each write by default is scenario 22's.
      const guard = health ? `, health: { url: "${sim.site_url}", clear_cache: false }` : '';
      const pb = `version: 1\nname: health-${name}\nsettings: { rate_limit: ${R}/s, concurrency: 8 }\ntasks:\n  - { name: php, action: php.set_version, target: all, with: { php_version: "8.3" }, rollout: { canary: 1, waves: ["25%", "100%"] }${guard} }\n`;
      const res = await runCli(['run', writePlaybook(dir, pb, `health-${name}.yaml`), '--yes', '--report', report, '--state-dir', dir], sim.env);
      const log = sim.log();
      const results = JSON.parse(readFileSync(report, 'utf8')).results;
      runs[name] = {
        exit: res.code,
        rolloutMs: rolloutMs(report.replace(/\.json$/, '.journal.jsonl')),
        writes: log.filter((e) => e.method !== 'GET').length,
        polls: log.filter((e) => e.endpoint === 'getOperation').length,
        domainReads: log.filter((e) => e.endpoint === 'listDomains').length,
        otherReads: log.filter((e) => e.method === 'GET' && e.endpoint !== 'getOperation' && e.endpoint !== 'listDomains').length,
        notApi: log.filter((e) => !e.path.startsWith('/v2/')).length,
        succeeded: results.filter((r) => r.status === 'succeeded').length,
        healthy: results.filter((r) => r.health?.outcome === 'healthy').length,
        steps: results.filter((r) => r.step_id !== null).length,
      };
    } finally {
      await sim.stop();
    }
  }
  const { without: a, with: b } = runs;
  const ratio = b.rolloutMs / a.rolloutMs;
  return {
    name: `15. health checks on a rollout (${a.steps} environments, sites 50–150 ms, ops 1–3 s, ${R}/s, canary + 2 waves)`,
    figures: {
      environments: a.steps,
      rollout_ms_without: Math.round(a.rolloutMs),
      rollout_ms_with: Math.round(b.rolloutMs),
      ratio: round(ratio, 3),
      writes: `${a.writes} / ${b.writes}`,
      polls: `${a.polls} / ${b.polls}`,
      domain_reads: `${a.domainReads} / ${b.domainReads}`,
      other_reads: `${a.otherReads} / ${b.otherReads}`,
      site_requests_in_api_log: b.notApi,
      healthy: `${b.healthy}/${b.steps}`,
      exits: `${a.exit}, ${b.exit}`,
    },
    target:
      'with health: ≤ 1.1 × the rollout without; no API call beyond one domain read per environment (same writes and other reads, polls within 10%); every site healthy',
    met:
      ratio <= 1.1 &&
      a.exit === 0 &&
      b.exit === 0 &&
      b.writes === a.writes &&
      b.otherReads === a.otherReads &&
      a.domainReads === 0 &&
      b.domainReads <= b.steps &&
      b.polls <= a.polls * 1.1 &&
      b.notApi === 0 &&
      b.healthy === b.steps &&
      a.succeeded === a.steps,
  };
}
