import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { Simulator } from '../../src/sim/server.js';
import { runCli, simEnv, tempDir } from '../helpers/cli.js';
import { useSimulator } from '../helpers/sim.js';

const start = useSimulator();

function sitesCsv(sim: Simulator, dir: string): string {
  const file = join(dir, 'sites.csv');
  writeFileSync(file, `name,id\n${[...sim.fleet.sites.values()].map((s) => `"${s.displayName}",${s.id}`).join('\n')}\n`);
  return file;
}

describe('site ids and ssh-config', () => {
  it('inventory shows the site id from --sites (YAML or CSV)', async () => {
    const { sim } = await start({ sites: 5 });
    const dir = tempDir();
    const yaml = join(dir, 'sites.yaml');
    writeFileSync(yaml, [...sim.fleet.sites.values()].map((s) => `${s.displayName}: ${s.id}`).join('\n'));
    for (const file of [yaml, sitesCsv(sim, dir)]) {
      const result = await runCli(['inventory', '--sites', file, '--format', 'json'], simEnv(sim));
      expect(result.code).toBe(0);
      const inventory = JSON.parse(result.stdout) as { environments: { id: string; site_id?: string }[] };
      for (const env of inventory.environments) expect(env.site_id).toBe(sim.fleet.environments.get(env.id)!.siteId);
    }
  });

  it('prints an OpenSSH Host block per selected environment, from exactly one config read each', async () => {
    const { sim } = await start({ sites: 6 });
    const dir = tempDir();
    const result = await runCli(['ssh-config', '--sites', sitesCsv(sim, dir), '--environment', 'live'], simEnv(sim));
    expect(result.code).toBe(0);
    const live = [...sim.fleet.environments.values()].filter((e) => e.displayName === 'live');
    const blocks = result.stdout.split('\n\n').filter((b) => b.startsWith('Host '));
    expect(blocks).toHaveLength(live.length);
    const reads = sim.log.filter((e) => e.path.endsWith('/ssh/config'));
    expect(reads).toHaveLength(live.length);
    expect(reads.every((e) => e.status === 200)).toBe(true);
    const json = await runCli(['ssh-config', '--sites', sitesCsv(sim, dir), '--environment', 'live', '--format', 'json'], simEnv(sim));
    const raw = JSON.parse(json.stdout) as { site: string; environment: string; config: { host: string; port: string; user: string } }[];
    for (const r of raw)
      expect(result.stdout).toContain(`Host ${r.site}-${r.environment}\n  HostName ${r.config.host}\n  Port ${r.config.port}\n  User ${r.config.user}`);
  });

  it('bad input exits 2 with one line: no sites file, a file that is not YAML or CSV, an unknown site, a site without an id', async () => {
    const { sim } = await start({ sites: 3 });
    const dir = tempDir();
    const noFile = await runCli(['ssh-config'], simEnv(sim));
    expect([noFile.code, noFile.stderr.trim()]).toEqual([
      2,
      'sitefleet: ssh-config needs site ids, which the theme listing does not carry: pass --sites FILE (YAML or CSV of site name, site id)',
    ]);
    const garbage = join(dir, 'sites.yaml');
    writeFileSync(garbage, 'just: [a, list');
    const notYaml = await runCli(['ssh-config', '--sites', garbage], simEnv(sim));
    expect(notYaml.code).toBe(2);
    expect(notYaml.stderr.split('\n')[0]).toMatch(/sites\.yaml:\d+:\d+: \(root\): not YAML: /);
    const badCsv = join(dir, 'sites.csv');
    writeFileSync(badCsv, 'acme,not-a-uuid,extra\n');
    expect((await runCli(['ssh-config', '--sites', badCsv], simEnv(sim))).stderr.split('\n')[0]).toMatch(
      /sites\.csv:1:1: \(root\): a sites CSV line is: site name, site id \(UUID\)/,
    );
    const unknown = await runCli(['ssh-config', '--sites', sitesCsv(sim, dir), '--site', 'no-such-site'], simEnv(sim));
    expect([unknown.code, unknown.stderr.trim()]).toEqual([2, 'sitefleet: no site in this fleet matches "no-such-site"']);
    const partial = join(dir, 'partial.csv');
    const [first] = [...sim.fleet.sites.values()];
    writeFileSync(partial, `${first!.displayName},${first!.id}\n`);
    const missing = await runCli(['ssh-config', '--sites', partial], simEnv(sim));
    expect(missing.code).toBe(2);
    expect(missing.stderr).toMatch(/^sitefleet: no site id for .*: add them to .*partial\.csv\n$/);
    expect(sim.log.filter((e) => e.path.endsWith('/ssh/config'))).toEqual([]);
  });
});

describe('site-scoped actions over the fleet', () => {
  it('a target means one call per selected site: a plain environment on every acme-* site, live cloned to qa on blue-*', async () => {
    const { sim } = await start({ sites: 24, operationDelayMs: 0 });
    const dir = tempDir();
    const sites = [...sim.fleet.sites.values()];
    const acme = sites.filter((s) => s.displayName.startsWith('acme-'));
    const blue = sites.filter((s) => s.displayName.startsWith('blue-'));
    expect(acme.length * blue.length).toBeGreaterThan(0);
    const file = join(dir, 'sites.yaml');
    writeFileSync(
      file,
      `version: 1\nname: sites\nsites:\n${sites.map((s) => `  ${s.displayName}: ${s.id}`).join('\n')}\ntasks:\n` +
        '  - { name: fresh, action: environments.create_plain, target: { site: "acme-*" }, with: { display_name: fresh, is_premium: false } }\n' +
        '  - { name: qa, action: environments.clone, target: { site: "blue-*" }, with: { display_name: qa, source_environment: live } }\n',
    );
    const result = await runCli(['run', file, '--yes', '--report', join(dir, 'r.json')], simEnv(sim));
    expect(result.code).toBe(0);
    const posts = sim.log.filter((e) => e.method === 'POST');
    expect(
      posts
        .filter((e) => e.path.endsWith('/environments/plain'))
        .map((e) => e.path)
        .sort(),
    ).toEqual(acme.map((s) => `/v2/sites/${s.id}/environments/plain`).sort());
    const clones = posts.filter((e) => e.path.endsWith('/environments/clone'));
    expect(clones).toHaveLength(blue.length);
    for (const site of blue) {
      const live = [...sim.fleet.environments.values()].find((e) => e.siteId === site.id && e.displayName === 'live')!;
      expect(clones.find((e) => e.path === `/v2/sites/${site.id}/environments/clone`)?.body).toEqual({ display_name: 'qa', source_env_id: live.id });
    }
  });

  it('a targeted site without a known id exits 2 naming it, before anything is sent', async () => {
    const { sim } = await start({ sites: 6 });
    const dir = tempDir();
    const file = join(dir, 'p.yaml');
    writeFileSync(file, 'version: 1\nname: s\ntasks:\n  - { name: fresh, action: environments.create_plain, target: all, with: { display_name: fresh } }\n');
    const result = await runCli(['run', file, '--yes', '--report', join(dir, 'r.json')], simEnv(sim));
    expect(result.code).toBe(2);
    expect(result.stderr.split('\n')[0]).toMatch(
      /p\.yaml:4:\d+: tasks\.0\.target: no site id for site "[a-z]+-\d+": add it under sites: in the playbook, or pass --sites FILE/,
    );
    expect(sim.log.filter((e) => e.method !== 'GET')).toEqual([]);
  });
});
