import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { Report } from '../../src/report/report.js';
import type { SimEnvironment } from '../../src/sim/fleet.js';
import { useSimulator } from '../helpers/sim.js';
import { runCli, simEnv, tempDir, writePlaybook } from '../helpers/cli.js';

const start = useSimulator();

function envsOf(sim: { fleet: { environments: Map<string, SimEnvironment>; sites: Map<string, { displayName: string }> } }, site: RegExp, env?: string) {
  return [...sim.fleet.environments.values()].filter(
    (e) => site.test(sim.fleet.sites.get(e.siteId)!.displayName) && (env === undefined || e.displayName === env),
  );
}

describe('sitefleet run: every action, end to end against the simulator', () => {
  it('sends exactly the expected calls, each target once, and reports the operation ids the simulator issued', async () => {
    const { sim } = await start({ sites: 24, themes: 6, operationDelayMs: 0 });
    const dir = tempDir();
    const sites = [...sim.fleet.sites.values()];
    const pushSite = sites.find((s) => s.envIds.length === 2)!;
    const [pushLive, pushStaging] = pushSite.envIds;

    // What each task must send, worked out from the simulator's own state (not from the planner).
    const expected: string[] = [];
    const call = (method: string, path: string, body: unknown) => expected.push(`${method} ${path} ${JSON.stringify(body)}`);
    for (const e of [...sim.fleet.environments.values()]) {
      const names = [...e.themes]
        .filter(([name, t]) => {
          const c = sim.fleet.catalog.get(name)!;
          return t.version !== c.versions.at(-1) && !c.vulnerable.has(c.versions.at(-1)!);
        })
        .map(([name]) => name)
        .sort();
      if (names.length) call('PUT', `/v2/sites/environments/${e.id}/themes/bulk-update`, { themes: names.map((name) => ({ name })) });
    }
    for (const e of envsOf(sim, /./, 'staging'))
      call('PUT', '/v2/sites/tools/modify-php-version', { environment_id: e.id, php_version: '8.2', is_opt_out_from_automatic_php_update: false });
    for (const e of envsOf(sim, /^acme-/))
      call('PUT', '/v2/sites/tools/denied-ips', { environment_id: e.id, ip_list: ['203.0.113.7', '198.51.100.0/32', '2001:db8::1'] });
    for (const e of envsOf(sim, /^blue-/))
      call('POST', `/v2/sites/environments/${e.id}/manual-backups`, { tag: `nightly-2026-test-${sim.fleet.sites.get(e.siteId)!.displayName}` });
    for (const e of envsOf(sim, /^coral-/, 'live'))
      call('POST', `/v2/sites/environments/${e.id}/run-wp-cli-command`, { wp_command: "wp option update blogdescription 'Just another site'" });
    for (const e of envsOf(sim, /^delta-/)) call('POST', `/v2/sites/environments/${e.id}/ssh/set-status`, { is_enabled: false });
    for (const e of envsOf(sim, /^delta-/)) call('POST', `/v2/sites/environments/${e.id}/ssh/change-expiration-interval`, { exp_interval: 'days_7' });
    for (const e of envsOf(sim, /^ember-/)) call('PUT', `/v2/sites/environments/${e.id}/additional-sftp-accounts/toggle-status`, { enabled: true });
    for (const e of envsOf(sim, /^fjord-/, 'live'))
      call('POST', `/v2/sites/environments/${e.id}/domains`, {
        domain_name: `shop.${sim.fleet.sites.get(e.siteId)!.displayName}.example.net`,
        setup_type: 'quick',
      });
    for (const e of envsOf(sim, /^acme-/))
      for (const d of e.domains.filter((d) => d.usesProviderDns))
        call('POST', `/v2/domains/${d.id}/dns-records`, { type: 'A', name: `www.${d.name}`, resource_records: [{ value: '203.0.113.10' }], ttl: 600 });
    for (const e of envsOf(sim, /^nova-/))
      call('POST', `/v2/sites/environments/${e.id}/wpa-create-user`, { email: 'ops@example.com', first_name: 'Ops', last_name: 'Team' });
    for (const e of envsOf(sim, /^nova-/)) call('POST', `/v2/sites/environments/${e.id}/wpa-login-url`, { email: 'ops@example.com' });
    call('POST', `/v2/sites/${pushSite.id}/environments`, {
      display_name: 'dev',
      admin_email: 'ops@example.com',
      admin_password: '[redacted]',
      admin_user: 'ops',
      wp_language: 'de_DE',
    });
    call('POST', `/v2/sites/${pushSite.id}/environments/plain`, { display_name: 'bare', is_premium: false });
    call('POST', `/v2/sites/${pushSite.id}/environments/clone`, { display_name: 'qa', source_env_id: pushLive });
    call('PUT', `/v2/sites/${pushSite.id}/environments`, {
      source_env_id: pushStaging,
      target_env_id: pushLive,
      push_db: true,
      push_files: true,
      push_files_option: 'ALL_FILES',
    });
    call('POST', '/v2/sites/plain', { company: sim.companyId, display_name: 'new-shop', region: 'europe-west1' });

    const links = join(dir, 'links.json');
    const playbook = writePlaybook(
      `version: 1
name: every-action
company: \${SITEFLEET_COMPANY}
settings: { rate_limit: 100/s, concurrency: 4 }
tasks:
  - { name: themes, action: themes.update, target: all }
  - { name: php, action: php.set_version, target: { environment: staging }, with: { php_version: "8.2", opt_out_automatic_updates: false } }
  - { name: ips, action: denied_ips.set, target: { site: "acme-*" }, with: { ip_list: ["203.0.113.7", "198.51.100.0/32", "2001:db8::1"] } }
  - { name: backup, action: backups.create, target: { site: "blue-*" }, with: { tag: "nightly-2026-test-{{site}}" } }
  - { name: wp, action: wp_cli.run, target: { site: "coral-*", environment: live }, with: { wp_command: "wp option update blogdescription 'Just another site'" } }
  - { name: ssh off, action: ssh.set_status, target: { site: "delta-*" }, with: { is_enabled: false } }
  - { name: ssh expiry, action: ssh.set_password_expiration, target: { site: "delta-*" }, with: { exp_interval: days_7 } }
  - { name: sftp, action: sftp_accounts.set_status, target: { site: "ember-*" }, with: { enabled: true } }
  - { name: domain, action: domains.add, target: { site: "fjord-*", environment: live }, with: { domain_name: "shop.{{site}}.example.net", setup_type: quick } }
  - { name: dns, action: dns_records.create, target: { site: "acme-*" }, with: { type: A, name: "www.{{domain}}", ttl: 600, resource_records: [{ value: "203.0.113.10" }] } }
  - { name: admin, action: admin_users.create, target: { site: "nova-*" }, with: { email: ops@example.com, first_name: Ops, last_name: Team } }
  - { name: links, action: admin_users.login_link, target: { site: "nova-*" }, with: { email: ops@example.com, output_file: "${links}" } }
  - { name: create env, action: environments.create, with: { site_id: "${pushSite.id}", display_name: dev, admin_email: ops@example.com, admin_password: "\${DEV_ADMIN_PASSWORD}", admin_user: ops, wp_language: de_DE } }
  - { name: plain env, action: environments.create_plain, with: { site_id: "${pushSite.id}", display_name: bare, is_premium: false } }
  - { name: clone, action: environments.clone, with: { site_id: "${pushSite.id}", display_name: qa, source_env_id: "${pushLive}" } }
  - { name: push, action: environments.push, with: { site_id: "${pushSite.id}", source_env_id: "${pushStaging}", target_env_id: "${pushLive}", push_db: true, push_files: true, push_files_option: ALL_FILES } }
  - { name: site, action: sites.create_plain, with: { display_name: new-shop, region: europe-west1 } }
`,
      dir,
    );
    const report = join(dir, 'report.json');
    const logFile = join(dir, 'run.log');
    const result = await runCli(['run', playbook, '--yes', '--report', report, '--log-file', logFile, '--log-level', 'debug'], {
      ...simEnv(sim),
      DEV_ADMIN_PASSWORD: 'correct horse battery staple',
    });
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);

    const writes = sim.log.filter((e) => e.method !== 'GET');
    expect(writes.map((e) => `${e.method} ${e.path} ${JSON.stringify(e.body)}`).sort()).toEqual([...expected].sort());
    expect(writes.every((e) => e.status === 200 || e.status === 202)).toBe(true);
    // The secret reached the simulator, resolved, and nowhere else.
    const created = [...sim.fleet.environments.values()].find((e) => e.displayName === 'dev');
    expect(created).toBeDefined();

    const parsed = JSON.parse(readFileSync(report, 'utf8')) as Report;
    const issued = writes
      .filter((e) => e.operation_id)
      .map((e) => e.operation_id)
      .sort();
    expect(
      parsed.results
        .filter((r) => r.operation_id)
        .map((r) => r.operation_id)
        .sort(),
    ).toEqual(issued);
    expect(parsed.results.filter((r) => r.status === 'accepted').every((r) => /^[a-z-]+:[a-z-]+-[0-9a-f-]{36}$/.test(r.operation_id!))).toBe(true);
    expect(parsed.summary.failed + parsed.summary.unknown).toBe(0);
    expect(parsed.summary.accepted + parsed.summary.succeeded).toBe(expected.length);

    const linkFile = JSON.parse(readFileSync(links, 'utf8')) as { login_link: string }[];
    expect(linkFile).toHaveLength(envsOf(sim, /^nova-/).length);
    expect(statSync(links).mode & 0o777).toBe(0o600);
    for (const text of [readFileSync(report, 'utf8'), readFileSync(logFile, 'utf8'), result.stdout]) {
      expect(text).not.toContain(sim.token);
      expect(text).not.toContain('correct horse');
      expect(text).not.toContain('sso_token');
    }
  });

  it('plan and run --dry-run send only GETs, and show what would be sent', async () => {
    const { sim } = await start({ sites: 10, operationDelayMs: 0 });
    const dir = tempDir();
    const playbook = writePlaybook(`version: 1\nname: d\ntasks:\n  - { name: backup, action: backups.create, target: all, with: { tag: "t-{{env}}" } }\n`, dir);
    const planOut = join(dir, 'plan.json');
    const plan = await runCli(['plan', playbook, '--verbose', '--out', planOut], simEnv(sim));
    expect(plan.code).toBe(0);
    const envCount = sim.fleet.environments.size;
    expect(plan.stdout).toContain(`${envCount} calls would be sent (${envCount} of them create something`);
    const first = [...sim.fleet.environments.values()][0]!;
    expect(plan.stdout).toContain(`POST /sites/environments/${first.id}/manual-backups {"tag":"t-${first.displayName}"}`);
    expect(JSON.parse(readFileSync(planOut, 'utf8')).steps).toHaveLength(envCount);
    const dry = await runCli(['run', playbook, '--dry-run', '--report', join(dir, 'r.json')], simEnv(sim));
    expect(dry.code).toBe(0);
    const report = JSON.parse(readFileSync(join(dir, 'r.json'), 'utf8')) as Report;
    expect(report.mode).toBe('dry-run');
    expect(report.summary).toMatchObject({ total: envCount, planned: envCount, accepted: 0 });
    expect(sim.log.every((e) => e.method === 'GET')).toBe(true);
    expect(sim.log.filter((e) => e.changed)).toEqual([]);
  });

  it('inventory prints every environment with its themes, plugins and WordPress as table, json and csv', async () => {
    const { sim } = await start({ sites: 5 });
    const json = await runCli(['inventory', '--format', 'json'], simEnv(sim));
    expect(json.code).toBe(0);
    const inv = JSON.parse(json.stdout) as { environments: { id: string; items: { theme?: unknown[] } }[] };
    expect(inv.environments.map((e) => e.id).sort()).toEqual([...sim.fleet.environments.keys()].sort());
    const csv = await runCli(['inventory', '--format', 'csv'], simEnv(sim));
    const envs = [...sim.fleet.environments.values()];
    const themes = envs.reduce((n, e) => n + e.themes.size, 0);
    const plugins = envs.reduce((n, e) => n + e.plugins.size, 0);
    // One row an installed item: each theme, each plugin, and the WordPress each environment runs.
    const rows = csv.stdout.trim().split('\n').slice(1);
    expect(rows).toHaveLength(themes + plugins + envs.length);
    expect(rows.filter((r) => r.includes(',core,wordpress,'))).toHaveLength(envs.length);
    const table = await runCli(['inventory'], simEnv(sim));
    expect(table.stdout).toMatch(
      new RegExp(`${envs.length} environments, ${themes} installed themes, ${plugins} installed plugins, ${envs.length} with their WordPress version`),
    );
  });
});
