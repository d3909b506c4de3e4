// Issue 31's measurement: how long a site broken by a canary's update stays broken when the run
// restores it (`health.on_broken: restore`). From the journal: the record that says the check failed
// to the record that says the restored site answered healthy, against what cannot be avoided: the
// restore's operation (the simulator's fixed operation time), the cache clear's after it (health.clear_cache,
// one more operation) and one health check (the sites' latency). The vendor's one clear per 10 s per
// environment is scaled as the operations are (2 s): the restore's clear never waits for the write's.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { round, runCli, sitesFor, startSim, writePlaybook } from './lib.mjs';

const OP_MS = 2000;
const SITE_MS = 100;

export async function restoreTime(dir) {
  const N = 40;
  // Every theme's newest version breaks its sites: whichever theme the canary updates, its site breaks.
  const breaks = ['astra', 'neve', 'kadence', 'generatepress'].flatMap((t) => ['--break-theme', `${t}@latest`]);
  const sim = await startSim(
    [
      '--size',
      String(sitesFor(N)),
      '--themes',
      '4',
      '--rate',
      '20/s',
      '--op-delay',
      String(OP_MS),
      '--site-latency',
      `${SITE_MS}-${SITE_MS}`,
      '--clear-cache-gap',
      String(OP_MS),
      '--seed',
      '31',
      ...breaks,
    ],
    dir,
  );
  try {
    const report = join(dir, 'restore.json');
    const pb =
      `version: 1\nname: restore\nsettings: { rate_limit: 20/s }\ntasks:\n  - name: themes\n    action: themes.update\n    target: { environment: live }\n` +
      `    with: { skip_vulnerable_updates: false }\n    backup_first: true\n    max_failures: 0\n    rollout: { canary: 1, waves: ["25%", "100%"] }\n` +
      `    health: { url: "${sim.site_url}", attempts: 1, on_broken: restore }\n`;
    const res = await runCli(['run', writePlaybook(dir, pb, 'restore.yaml'), '--yes', '--report', report, '--state-dir', dir], sim.env);
    const records = readFileSync(report.replace(/\.json$/, '.journal.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    const broken = records.find((r) => r.t === 'update' && r.result.health?.outcome === 'unhealthy');
    const healthy = records.find((r) => r.t === 'update' && r.result.restored?.health?.outcome === 'healthy');
    const restores = sim.log().filter((e) => e.path.endsWith('/backups/restore')).length;
    const tookMs = healthy && broken ? healthy.at - broken.at : NaN;
    const floorMs = 2 * OP_MS + SITE_MS;
    const ratio = tookMs / floorMs;
    return {
      name: `18. a canary broken and restored (${N} environments, ops ${OP_MS} ms, sites ${SITE_MS} ms, canary + 2 waves)`,
      figures: { exit: res.code, restores, broken_to_healthy_ms: Math.round(tookMs), restore_and_clear_ops_plus_check_ms: floorMs, ratio: round(ratio, 3) },
      target:
        'broken to healthy again ≤ 1.2 × (the restore operation + the cache clear operation + one health check); exactly one restore; the rollout stops (exit 3)',
      met: ratio <= 1.2 && restores === 1 && res.code === 3,
    };
  } finally {
    await sim.stop();
  }
}
