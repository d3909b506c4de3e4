import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { Report } from '../../src/report/report.js';
import { runCli, simEnv, tempDir, writePlaybook } from '../helpers/cli.js';
import { requestsTo } from '../helpers/plugins.js';
import { useSimulator } from '../helpers/sim.js';
import { fourPlugins, isolatingNight } from '../helpers/isolate.js';

const start = useSimulator();

/**
 * A culprit found at the canary is left out of the later waves' writes (run-quarantine.ts): what the
 * service got is a bulk update of the others. The report, and the client's maintenance record made
 * from it, must say what was sent, never the plan's untrimmed body and versions.
 */
describe('a write the run quarantine trimmed, as the report and the record tell it', () => {
  it('the report names the request that was sent; the record never lists the culprit as updated where it was left out', async () => {
    const { sim } = await start({ sites: 2, seed: 5, operationDelayMs: 20, pageCacheTtlMs: 0, createRate: '100/s', operationVisibleAfterMs: 0 }); // a canary's chain of operations in series: neither the creating-call limit nor new operations' 2 s of 404 (the real profile's) is what is tested
    fourPlugins(sim, 'all');
    const yaml = isolatingNight(sim, "    rollout: { canary: 1, waves: ['100%'] }\n");
    const dir = tempDir();
    const path = join(dir, 'r.json');
    const res = await runCli(['run', writePlaybook(yaml, dir), '--yes', '--poll-interval', '50', '--report', path], simEnv(sim));
    expect(res.code, res.stdout + res.stderr).toBe(1);
    const report = JSON.parse(readFileSync(path, 'utf8')) as Report;
    const later = report.results.find((r) => r.request?.method === 'PUT' && r.wave !== 0)!;
    expect(later.status).toBe('succeeded');
    const got = requestsTo(sim, 'bulkUpdatePlugins').filter((e) => e.path.split('/')[4] === later.target.env_id);
    expect(got.map((e) => e.body)).toEqual([{ plugins: [{ name: 'p1' }, { name: 'p2' }, { name: 'p3' }] }]);
    // What the report says was sent, and the versions it says the write moved between.
    expect(later.request!.body).toEqual(got[0]!.body);
    expect(later.precondition ?? '').not.toContain('p0');
    // The client's record of the site: p0 was not updated there.
    const html = join(dir, 'record.html');
    const page = await runCli(['report', path, '--site', later.target.site!, '--html', html], simEnv(sim));
    expect(page.code, page.stderr).toBe(0);
    const text = readFileSync(html, 'utf8');
    expect(text).toContain('p1 1.0.0 → 1.1.0');
    expect(text).not.toContain('p0 1.0.0 → 1.1.0');
  });
});
