import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { Plan } from '../../src/plan/plan.js';
import type { Report } from '../../src/report/report.js';
import type { Simulator } from '../../src/sim/server.js';
import { runCli, simEnv, tempDir, writePlaybook } from '../helpers/cli.js';
import { installedPlugins, offeredPlugins, pluginPlaybook, requestsTo } from '../helpers/plugins.js';
import { useSimulator } from '../helpers/sim.js';

const start = useSimulator();

async function run(sim: Simulator, yaml: string, env = simEnv(sim)) {
  const dir = tempDir();
  const reportPath = join(dir, 'r.json');
  const result = await runCli(['run', writePlaybook(yaml, dir), '--yes', '--poll-interval', '50', '--report', reportPath], env);
  return { ...result, report: JSON.parse(readFileSync(reportPath, 'utf8')) as Report };
}

const writesOf = (report: Report) => report.results.filter((r) => r.request?.method === 'PUT');

describe('where the company plugin listing cannot be used', () => {
  it.each(['absent', 'no-ids'] as const)(
    'pluginListing %s: the plan reads each selected environment’s own listing, says so, and the run still updates',
    async (pluginListing) => {
      const { sim } = await start({ sites: 4, pluginsPerEnv: 6, seed: 11, pluginListing });
      const env = simEnv(sim);
      const live = [...sim.fleet.environments.values()].filter((e) => e.displayName === 'live').map((e) => e.id);
      const yaml = pluginPlaybook('', '{ rate_limit: 50/s, wait: true }').replace('target: all', 'target: { environment: live }');
      const out = join(tempDir(), 'plan.json');
      const planned = await runCli(['plan', writePlaybook(yaml), '--out', out], env);
      expect(planned.code, planned.stderr).toBe(0);
      const plan = JSON.parse(readFileSync(out, 'utf8')) as Plan;
      expect(plan.inventory.plugins_from_environments).toEqual(expect.any(String));
      const plugins = new Set([...sim.fleet.environments.values()].filter((e) => live.includes(e.id)).flatMap((e) => [...e.plugins.keys()]));
      expect(plan.inventory.plugins).toBe(plugins.size);
      // The terminal says so too, with the count read.
      expect(planned.stdout.split('\n')[0]).toContain(
        `${plugins.size} plugins read from each environment's own listing (${plan.inventory.plugins_from_environments})`,
      );
      const dry = await runCli(['run', writePlaybook(yaml), '--dry-run'], env);
      expect(dry.code, dry.stderr).toBe(0);
      expect(dry.stdout).toContain(`${plugins.size} plugins read from each environment's own listing (`);
      // One read of each selected environment's own listing (each plan), none of the others.
      expect(
        requestsTo(sim, 'listEnvironmentPlugins')
          .map((e) => e.path.split('/')[4])
          .sort(),
      ).toEqual([...live, ...live].sort());

      const safe = offeredPlugins(sim).filter((o) => live.includes(o.env) && !o.vulnerableUpdate);
      expect(safe.length).toBeGreaterThan(0);
      const night = await run(sim, yaml, env);
      expect(night.code, night.stderr).toBe(0);
      for (const o of safe) expect(installedPlugins(sim).get(`${o.env} ${o.name}`)).toBe(o.latest);
      for (const w of writesOf(night.report))
        expect(w).toMatchObject({ status: 'succeeded', operation_id: expect.stringMatching(/^wp-plugins:bulk-update-/) as unknown });
    },
  );
});

describe('a plugin bulk update answered 200 without an operation id', () => {
  it('is done at once, not reported as an operation; verify reads each environment’s own listing once after its write', async () => {
    const { sim } = await start({ sites: 4, pluginsPerEnv: 6, seed: 11, pluginBulkOperationId: false });
    const safe = offeredPlugins(sim).filter((o) => !o.vulnerableUpdate);
    const written = [...new Set(safe.map((o) => o.env))].sort();
    const night = await run(sim, pluginPlaybook('    verify: true\n'));
    expect(night.code, night.stderr).toBe(0);
    for (const o of safe) expect(installedPlugins(sim).get(`${o.env} ${o.name}`)).toBe(o.latest);
    const writes = writesOf(night.report);
    expect(writes.map((w) => w.target.env_id).sort()).toEqual(written);
    for (const w of writes) expect(w).toMatchObject({ status: 'succeeded', http_status: 200, operation_id: null });
    expect(requestsTo(sim, 'getOperation')).toEqual([]);
    // Verify: one read of each written environment's own listing, after its write.
    const reads = requestsTo(sim, 'listEnvironmentPlugins');
    expect(reads.map((e) => e.path.split('/')[4]).sort()).toEqual(written);
    for (const read of reads) {
      const write = requestsTo(sim, 'bulkUpdatePlugins').find((e) => e.path.split('/')[4] === read.path.split('/')[4])!;
      expect(read.seq).toBeGreaterThan(write.seq);
    }
  });

  it('verify fails a step whose plugins still show an update in the environment’s own listing', async () => {
    const { sim } = await start({ sites: 3, pluginsPerEnv: 6, seed: 11, pluginBulkOperationId: false });
    const [first] = offeredPlugins(sim).filter((o) => !o.vulnerableUpdate);
    // A newer release comes out the moment the service installs the update on this environment: its own
    // listing then still shows an update available (the event, not a wait, makes it so).
    const item = sim.fleet.environments.get(first!.env)!.plugins.get(first!.name)!;
    let version = item.version;
    Object.defineProperty(item, 'version', {
      get: () => version,
      set(v: string) {
        version = v;
        const versions = sim.fleet.pluginCatalog.get(first!.name)!.versions;
        if (v === versions.at(-1)) versions.push(`${v}.1`);
      },
    });
    const night = await run(sim, pluginPlaybook(`    verify: true\n    with: { plugins: ${first!.name} }\n`));
    expect(night.code, night.stderr).not.toBe(0);
    const step = writesOf(night.report).find((w) => w.target.env_id === first!.env)!;
    expect(step).toMatchObject({ status: 'failed', operation_id: null });
    expect(step.error ?? step.reason).toContain(`the listing still shows an update available for ${first!.name}`);
    for (const w of writesOf(night.report).filter((w) => w !== step)) expect(w.status).toBe('succeeded');
  });
});

describe('a company plugin listing that lags behind the writes', () => {
  it('a run with verify still ends succeeded: verify reads the environment’s own listing, not the lagging company one', async () => {
    const { sim } = await start({ sites: 4, pluginsPerEnv: 6, seed: 11, pluginListingLagMs: 12 * 3_600_000 });
    const env = simEnv(sim);
    const safe = offeredPlugins(sim).filter((o) => !o.vulnerableUpdate);
    const written = [...new Set(safe.map((o) => o.env))].sort();
    const yaml = pluginPlaybook('    verify: true\n');
    const night = await run(sim, yaml, env);
    expect(night.code, night.stderr).toBe(0);
    for (const w of writesOf(night.report))
      expect(w).toMatchObject({ status: 'succeeded', operation_id: expect.stringMatching(/^wp-plugins:bulk-update-/) as unknown });
    expect(
      requestsTo(sim, 'listEnvironmentPlugins')
        .map((e) => e.path.split('/')[4])
        .sort(),
    ).toEqual(written);
    for (const o of safe) expect(installedPlugins(sim).get(`${o.env} ${o.name}`)).toBe(o.latest);

    // Right after, the company listing still shows the old versions (the vendor caches plugin data up to
    // 12 hours), and a plan made from it now would send every update just done again. Known, reported
    // (issue 47's e2e helper): harmless to the sites (the service finds them at the latest already) but
    // calls spent and updates reported twice. This pins what happens today; change it when that is fixed.
    const out = join(tempDir(), 'plan.json');
    const again = await runCli(['plan', writePlaybook(yaml), '--out', out], env);
    expect(again.code, again.stderr).toBe(0);
    const plan = JSON.parse(readFileSync(out, 'utf8')) as Plan;
    const resent = plan.steps.filter((s) => s.method === 'PUT').map((s) => s.target.env_id);
    expect(plan.inventory.plugins_from_environments).toBeUndefined();
    expect(resent.sort()).toEqual(written);
  });
});

describe('pinned plugin updates beside a lagging company listing', () => {
  it('are read back from each environment’s own listing: the report records the version sent, not the cached one', async () => {
    const { sim } = await start({ sites: 3, pluginsPerEnv: 5, seed: 11, pluginListingLagMs: 12 * 3_600_000 });
    const safe = offeredPlugins(sim).filter((o) => !o.vulnerableUpdate);
    const night = await run(sim, pluginPlaybook('    with: { max_bump: major }\n'));
    expect(night.code, night.stderr).toBe(0);
    const writes = writesOf(night.report);
    expect(writes).toHaveLength(safe.length);
    for (const w of writes) {
      const body = w.request!.body as { name: string; update_version: string };
      expect(w).toMatchObject({ status: 'succeeded', runs: [{ name: body.name, version: body.update_version }] });
    }
  });
});

describe('a saved plugin plan', () => {
  it.each(['served', 'absent'] as const)('runs with --plan (company listing %s), its preconditions read as the plan was', async (pluginListing) => {
    const { sim } = await start({ sites: 3, pluginsPerEnv: 5, seed: 11, pluginListing });
    const env = simEnv(sim);
    const safe = offeredPlugins(sim).filter((o) => !o.vulnerableUpdate);
    const dir = tempDir();
    const file = writePlaybook(pluginPlaybook(''), dir);
    const out = join(dir, 'plan.json');
    expect((await runCli(['plan', file, '--out', out], env)).code).toBe(0);
    const reportPath = join(dir, 'r.json');
    const ran = await runCli(['run', file, '--plan', out, '--yes', '--poll-interval', '50', '--report', reportPath], env);
    expect(ran.code, ran.stdout + ran.stderr).toBe(0);
    for (const o of safe) expect(installedPlugins(sim).get(`${o.env} ${o.name}`)).toBe(o.latest);
  });
});
