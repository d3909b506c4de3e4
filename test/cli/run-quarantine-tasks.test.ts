import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { Report } from '../../src/report/report.js';
import { runCli, simEnv, tempDir, writePlaybook } from '../helpers/cli.js';
import { requestsTo } from '../helpers/plugins.js';
import { useSimulator } from '../helpers/sim.js';
import { fourPlugins } from '../helpers/isolate.js';

const start = useSimulator();

/**
 * A culprit isolation found in one task is sent by no write of the run after it (run-quarantine.ts),
 * a later task's included: whose steps, planned without isolation, keep no list of their updates.
 */
describe('a culprit one task found, in the writes of the tasks after it', () => {
  it('another task of the run sends it nowhere: its bulk writes carry the other updates', async () => {
    const { sim } = await start({ sites: 3, seed: 5, operationDelayMs: 20, pageCacheTtlMs: 0, createRate: '100/s', operationVisibleAfterMs: 0 });
    const { lives } = fourPlugins(sim, 'all');
    const first = sim.fleet.sites.get(lives[0]!.siteId)!.displayName;
    const yaml = `version: 1
name: two tasks
settings: { rate_limit: 50/s }
tasks:
  - name: canary site
    action: plugins.update
    target: { site: "${first}", environment: live }
    backup_first: true
    health: { url: "${sim.siteUrl}", attempts: 2, interval: 50ms, on_broken: isolate }
    max_failures: 100
  - name: the rest
    action: plugins.update
    target: { environment: live }
    max_failures: 100
`;
    const dir = tempDir();
    const path = join(dir, 'r.json');
    const res = await runCli(['run', writePlaybook(yaml, dir), '--yes', '--poll-interval', '50', '--report', path], simEnv(sim));
    const report = JSON.parse(readFileSync(path, 'utf8')) as Report;
    const canary = report.results.find((r) => r.task === 'canary site' && r.request?.method === 'PUT')!;
    expect(canary.isolation, res.stdout + res.stderr).toMatchObject({ outcome: 'found', culprits: [{ plugin: 'p0' }] });
    const rest = report.results.filter((r) => r.task === 'the rest' && r.request?.method === 'PUT');
    expect(rest).toHaveLength(lives.length);
    for (const w of rest) expect(w.reason, JSON.stringify(w)).toContain(`left out, quarantined in this run: p0 1.1.0 (it broke ${first} live)`);
    // What the service got from the second task: the other three, on every environment, the canary's included.
    const second = requestsTo(sim, 'bulkUpdatePlugins').slice(-lives.length);
    expect(second.map((e) => (e.body as { plugins: { name: string }[] }).plugins.map((p) => p.name))).toEqual(lives.map(() => ['p1', 'p2', 'p3']));
  });
});
