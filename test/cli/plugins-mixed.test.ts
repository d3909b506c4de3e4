import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { Report } from '../../src/report/report.js';
import type { Simulator } from '../../src/sim/server.js';
import { runCli, simEnv, tempDir, writePlaybook } from '../helpers/cli.js';
import { installedPlugins, offeredPlugins, requestsTo, stagedAkismet } from '../helpers/plugins.js';
import { useSimulator } from '../helpers/sim.js';
import { decisionsOf, HOUR, T0 } from '../helpers/staging.js';
import { installed } from '../helpers/themes.js';

const start = useSimulator();

async function run(sim: Simulator, yaml: string, env = simEnv(sim), now?: () => number) {
  const dir = tempDir();
  const reportPath = join(dir, 'r.json');
  const result = await runCli(['run', writePlaybook(yaml, dir), '--yes', '--poll-interval', '50', '--report', reportPath], env, { now });
  return { ...result, report: JSON.parse(readFileSync(reportPath, 'utf8')) as Report };
}

describe('plugins.update beside themes and through staging first', () => {
  it('a playbook with a themes.update task and a plugins.update task plans and runs both', async () => {
    const { sim } = await start({ sites: 4, pluginsPerEnv: 6, seed: 11 });
    const env = simEnv(sim);
    const plugins = offeredPlugins(sim).filter((o) => !o.vulnerableUpdate);
    const themes = [...sim.fleet.environments.values()].flatMap((e) =>
      [...e.themes].flatMap(([name, t]) => {
        const item = sim.fleet.catalog.get(name)!;
        const latest = item.versions.at(-1)!;
        return t.version !== latest && !item.vulnerable.has(latest) ? [{ env: e.id, name, latest }] : [];
      }),
    );
    expect(plugins.length).toBeGreaterThan(0);
    expect(themes.length).toBeGreaterThan(0);
    const yaml = `version: 1
name: mixed
settings: { rate_limit: 50/s }
tasks:
  - name: themes
    action: themes.update
    target: all
    rollout: { canary: 1, waves: ["100%"] }
  - name: plugins
    action: plugins.update
    target: all
    rollout: { canary: 1, waves: ["100%"] }
`;
    const planned = await runCli(['plan', writePlaybook(yaml)], env);
    expect(planned.code, planned.stderr).toBe(0);
    expect(planned.stdout).toMatch(/^1 +themes +themes\.update +\d+ +\d+ /m);
    expect(planned.stdout).toMatch(/^2 +plugins +plugins\.update +\d+ +\d+ /m);
    const night = await run(sim, yaml, env);
    expect(night.code, night.stderr).toBe(0);
    for (const t of themes) expect(installed(sim).get(`${t.env} ${t.name}`)).toBe(t.latest);
    for (const p of plugins) expect(installedPlugins(sim).get(`${p.env} ${p.name}`)).toBe(p.latest);
    // A rollout implies wait: each write's operation was followed to its end, and kept its id.
    const byTask = (task: string) => night.report.results.filter((r) => r.task === task && r.request?.method === 'PUT');
    expect(byTask('themes').length).toBe(new Set(themes.map((t) => t.env)).size);
    expect(byTask('plugins').length).toBe(new Set(plugins.map((p) => p.env)).size);
    for (const w of byTask('plugins'))
      expect(w).toMatchObject({ status: 'succeeded', operation_id: expect.stringMatching(/^wp-plugins:bulk-update-/) as unknown });
    for (const w of byTask('themes')) expect(w.status).toBe('succeeded');
  });

  it('rollout.staging_first: staging takes the plugin update first, live the same version on a run after the soak', async () => {
    const { sim } = await start({ sites: 5, pluginsPerEnv: 6, seed: 11, createRate: '100/s' }); // two nights of backups: not the creating-call limit
    // One plugin on every environment at its older version, so that each site with staging stages it.
    const { name, envs, stagings, stagedLive, yaml } = stagedAkismet(sim);
    expect(stagings.length).toBeGreaterThan(0);
    const env = simEnv(sim);
    const runsNow = () => new Map(envs.map((e) => [e.id, e.plugins.get(name)!.version]));
    const first = await run(sim, yaml, env, () => T0);
    expect(first.code, first.stderr).toBe(0);
    const afterFirst = runsNow();
    for (const s of stagings) expect(afterFirst.get(s.id), s.id).toBe('5.0.1');
    for (const l of stagedLive) expect(afterFirst.get(l.id), l.id).toBe('5.0.0');
    const staged = requestsTo(sim, 'updatePlugin');
    expect(staged.map((e) => e.path.split('/')[4]).sort()).toEqual(stagings.map((s) => s.id).sort());
    for (const e of staged) expect(e.body).toEqual({ name, update_version: '5.0.1' });
    expect(decisionsOf(first.report).some((d) => d.code === 'staged' && 'plugin' in d && d.plugin === name)).toBe(true);

    // The soak over, live takes the version staging ran, pinned.
    const later = sim.log.length;
    const third = await run(sim, yaml, env, () => T0 + 24 * HOUR);
    expect(third.code, third.stderr).toBe(0);
    for (const l of stagedLive) expect(runsNow().get(l.id), l.id).toBe('5.0.1');
    const promoted = requestsTo(sim, 'updatePlugin', later).filter((e) => stagedLive.some((l) => e.path.split('/')[4] === l.id));
    expect(promoted).toHaveLength(stagedLive.length);
    for (const e of promoted) expect(e.body).toEqual({ name, update_version: '5.0.1' });
    expect(decisionsOf(third.report).filter((d) => d.code === 'promoted')).toHaveLength(stagedLive.length);
  });
});

describe('inventory --exposure over plugins', () => {
  it('lists a vulnerable plugin (kind plugin), and --fail-on vulnerable exits 1 while it has a safe update, 0 once updated', async () => {
    const { sim } = await start({ sites: 3, pluginsPerEnv: 4, seed: 11 });
    // Nothing vulnerable but one plugin on one environment: what fails the check is that plugin.
    for (const item of [...sim.fleet.catalog.values(), ...sim.fleet.pluginCatalog.values()]) item.vulnerable.clear();
    const target = [...sim.fleet.environments.values()].find((e) => e.displayName === 'live')!;
    const name = [...target.plugins.keys()][0]!;
    sim.fleet.pluginCatalog.set(name, { name, title: name, versions: ['2.0.0', '2.0.1'], vulnerable: new Set(['2.0.0']) });
    for (const e of sim.fleet.environments.values()) if (e.plugins.has(name)) e.plugins.get(name)!.version = '2.0.1';
    target.plugins.get(name)!.version = '2.0.0';
    const env = simEnv(sim);
    const exposed = await runCli(['inventory', '--exposure', '--fail-on', 'vulnerable'], env);
    expect(exposed.code, exposed.stderr).toBe(1);
    const rows = exposed.stdout.split('\n').filter((l) => /^(theme|plugin) /.test(l));
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatch(new RegExp(`^plugin +${name} +\\S+ +live +${target.id} +2\\.0\\.0 +2\\.0\\.1 +yes`));
    const json = await runCli(['inventory', '--exposure', '--format', 'json'], env);
    expect(json.stdout).toContain(`"plugin"`);

    const fixed = await run(
      sim,
      `version: 1\nname: fix\nsettings: { rate_limit: 50/s, wait: true }\ntasks:\n  - name: plugins\n    action: plugins.update\n    target: all\n    with: { plugins: ${name}, only_vulnerable: true }\n`,
      env,
    );
    expect(fixed.code, fixed.stderr).toBe(0);
    expect(target.plugins.get(name)!.version).toBe('2.0.1');
    expect((await runCli(['inventory', '--exposure', '--fail-on', 'vulnerable'], env)).code).toBe(0);
  });
});

describe('inventory --exposure where the company plugin listing is absent', () => {
  it('fails --fail-on vulnerable with the plugins unchecked, and lists them with --each-environment', async () => {
    const { sim } = await start({ sites: 2, pluginsPerEnv: 4, seed: 11, pluginListing: 'absent' });
    for (const item of sim.fleet.catalog.values()) item.vulnerable.clear();
    const env = simEnv(sim);
    const unchecked = await runCli(['inventory', '--exposure', '--fail-on', 'vulnerable'], env);
    // No theme is vulnerable: what fails the check is that the plugins could not be looked at.
    expect(unchecked.code, unchecked.stderr).toBe(1);
    expect(unchecked.stdout).toContain('plugins not checked: the service does not serve the company plugin listing');
    expect(requestsTo(sim, 'listEnvironmentPlugins')).toEqual([]);
    const each = await runCli(['inventory', '--exposure', '--each-environment'], env);
    expect(each.code, each.stderr).toBe(0);
    expect(each.stdout).not.toContain('not checked');
    const vulnerable = [...sim.fleet.environments.values()].some((e) =>
      [...e.plugins].some(([n, p]) => sim.fleet.pluginCatalog.get(n)!.vulnerable.has(p.version)),
    );
    expect(vulnerable).toBe(true);
    expect(each.stdout).toMatch(/^plugin +\S+/m);
    expect(requestsTo(sim, 'listEnvironmentPlugins')).toHaveLength(sim.fleet.environments.size);
  });
});

describe('sitefleet validate with plugins.update', () => {
  it('accepts the task with its policies, and refuses a typo’d field with exit 2 naming file, line and field', async () => {
    const good = writePlaybook(`version: 1
name: plugins
tasks:
  - name: plugins
    action: plugins.update
    target: all
    verify: true
    with:
      plugins: ["woo*", "akismet"]
      exclude: [woocommerce-payments]
      max_bump: minor
      min_release_age: 3d
      by_bump: { major: 14d }
      release_age_bypass: none
      skip_vulnerable_updates: true
      only_vulnerable: false
    backup_first: true
    rollout: { staging_first: true, soak: 20h }
`);
    const ok = await runCli(['validate', good]);
    expect(ok.code, ok.stderr).toBe(0);
    const bad = writePlaybook(`version: 1
name: plugins
tasks:
  - name: plugins
    action: plugins.update
    target: all
    with:
      plugins: ["woo*"]
      max_bumpp: minor
`);
    const refused = await runCli(['validate', bad]);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain(`${bad}:9`);
    expect(refused.stderr).toContain('max_bumpp');
  });
});

describe('with.exclude', () => {
  it('leaves the excluded plugins alone and updates the rest', async () => {
    const { sim } = await start({ sites: 3, pluginsPerEnv: 6, seed: 11 });
    const safe = offeredPlugins(sim).filter((o) => !o.vulnerableUpdate);
    const excluded = safe[0]!.name;
    expect(safe.some((o) => o.name !== excluded)).toBe(true);
    const night = await run(
      sim,
      `version: 1\nname: x\nsettings: { rate_limit: 50/s, wait: true }\ntasks:\n  - name: plugins\n    action: plugins.update\n    target: all\n    with: { exclude: ["${excluded}"] }\n`,
    );
    expect(night.code, night.stderr).toBe(0);
    const after = installedPlugins(sim);
    for (const o of safe) expect(after.get(`${o.env} ${o.name}`), o.name).toBe(o.name === excluded ? o.version : o.latest);
    expect(requestsTo(sim, 'bulkUpdatePlugins').every((e) => !JSON.stringify(e.body).includes(`"${excluded}"`))).toBe(true);
  });
});
