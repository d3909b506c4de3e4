import { describe, expect, it } from 'vitest';
import type { CallResult, HostingClient } from '../../src/api/client.js';
import type { Accepted } from '../../src/api/types.js';
import { RequestValidationError } from '../../src/errors.js';
import { read } from '../helpers/calls.js';
import { UUID, useSimulator, waitFor } from '../helpers/sim.js';

const start = useSimulator();

/** An asynchronous write's answer, checked field by field to be what the spec's 202 holds; returned as that. */
function expectAccepted({ data }: CallResult, kind: string): Accepted {
  const answer = data as Accepted;
  expect(answer.status).toBe(202);
  expect(typeof answer.message).toBe('string');
  expect(answer.operation_id.startsWith(`${kind}-`)).toBe(true);
  expect(answer.operation_id.slice(kind.length + 1)).toMatch(UUID);
  return answer;
}

async function firstEnv(client: HostingClient, companyId: string) {
  const listing = await read(client, 'listThemes', { id: companyId }, { offset: 0, limit: 100 });
  const entry = listing.company.themes.items.flatMap((t) => t.environments.map((e) => ({ theme: t, env: e })))[0]!;
  return entry;
}

describe('HostingClient against the simulator: every endpoint', () => {
  it('lists API keys with the spec fields', async () => {
    const { sim, client } = await start();
    const { api_keys } = await read(client, 'listApiKeys', { id: sim.companyId });
    expect(api_keys.map((k) => k.status).sort()).toEqual(['active', 'active', 'expired', 'revoked']);
    for (const key of api_keys) {
      expect(Object.keys(key).sort()).toEqual(['expires_at', 'id', 'name', 'status']);
      expect(key.id).toMatch(UUID);
      expect(key.expires_at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    }
    expect(api_keys.map((k) => k.status)).toContain('active');
  });

  it('pages the theme listing with offset/limit and reports total', async () => {
    const { sim, client } = await start({ themes: 7, maxPageSize: 3 });
    const first = await read(client, 'listThemes', { id: sim.companyId }, { offset: 0, limit: 50 });
    expect(first.company.themes.total).toBe(7);
    expect(first.company.themes.items).toHaveLength(3); // the server's page cap wins over limit
    const last = await read(client, 'listThemes', { id: sim.companyId }, { offset: 6, limit: 3 });
    expect(last.company.themes.items).toHaveLength(1);
    const theme = first.company.themes.items[0]!;
    expect(Object.keys(theme).sort()).toEqual(
      ['description', 'environment_count', 'environments', 'is_latest_version_vulnerable', 'latest_version', 'name', 'title', 'update_count'].sort(),
    );
    const installed = [...first.company.themes.items, ...last.company.themes.items].find((t) => t.environments.length > 0)!;
    expect(Object.keys(installed.environments[0]!).sort()).toEqual(
      [
        'auto_update_type',
        'display_name',
        'id',
        'is_theme_update_version_vulnerable',
        'is_theme_version_vulnerable',
        'site_display_name',
        'theme_status',
        'theme_update',
        'theme_update_status',
        'theme_update_version',
        'theme_version',
      ].sort(),
    );
    const filtered = await read(client, 'listThemes', { id: sim.companyId }, { status: 'active', column: 'updatesAvailable', limit: 100 });
    for (const t of filtered.company.themes.items) {
      for (const e of t.environments) expect([e.theme_status, e.theme_update]).toEqual(['active', 'available']);
    }
    const searched = await read(client, 'listThemes', { id: sim.companyId }, { search: theme.name });
    expect(searched.company.themes.items.map((t) => t.name)).toContain(theme.name);
  });

  it('bulk-updates themes, and the listing stops showing the update once the operation completes', async () => {
    // The first poll answers "in progress" as an event: by time alone, a busy machine's first poll may come after the operation ended.
    const { sim, client } = await start({ operationPolls: { running: 1 } });
    const listing = await read(client, 'listThemes', { id: sim.companyId }, { column: 'updatesAvailable', limit: 100 });
    const theme = listing.company.themes.items.find((t) => t.environments.some((e) => e.theme_update === 'available'))!;
    const env = theme.environments.find((e) => e.theme_update === 'available')!;
    const answer = expectAccepted(await client.call('bulkUpdateThemes', { env_id: env.id }, { themes: [{ name: theme.name }] }), 'wp-themes:bulk-update');
    expect((await client.getOperation(answer.operation_id)).state).toBe('in_progress');
    await waitFor(async () => (await client.getOperation(answer.operation_id)).state === 'succeeded');
    const after = await read(client, 'listThemes', { id: sim.companyId }, { search: theme.name, limit: 100 });
    const entry = after.company.themes.items.find((t) => t.name === theme.name)!.environments.find((e) => e.id === env.id)!;
    expect(entry.theme_update).not.toBe('available');
    expect(entry.theme_version).toBe(theme.latest_version);
    expect(entry.theme_update_status).toBe('updated');
  });

  it('adds a manual backup that then appears in the backup list', async () => {
    const { sim, client } = await start();
    const { env } = await firstEnv(client, sim.companyId);
    const before = await read(client, 'listBackups', { env_id: env.id });
    expect(before.environment.display_name).toBe(env.display_name);
    for (const b of before.environment.backups) {
      expect(typeof b.id).toBe('number');
      expect(typeof b.created_at).toBe('number');
      expect(Object.keys(b).sort()).toEqual(['created_at', 'id', 'name', 'note', 'type']);
    }
    const answer = expectAccepted(await client.call('addManualBackup', { env_id: env.id }, { tag: 'nightly-test' }), 'backups:add-manual');
    await waitFor(async () => (await client.getOperation(answer.operation_id)).state === 'succeeded');
    const after = await read(client, 'listBackups', { env_id: env.id });
    expect(after.environment.backups.find((b) => b.note === 'nightly-test')?.type).toBe('manual');
  });

  it('adds a domain that then appears in the domain list, and creates a DNS record on a provider domain', async () => {
    const { sim, client } = await start({ operationDelayMs: 0 });
    const { env } = await firstEnv(client, sim.companyId);
    const answer = await client.call(
      'addDomain',
      { env_id: env.id },
      { domain_name: 'shop.example.org', setup_type: 'quick', add_with_www_subdomain: true, is_wildcardless: false },
    );
    expectAccepted(answer, 'sites:add-domain');
    const { environment } = await read(client, 'listDomains', { env_id: env.id });
    const added = environment.site_domains.find((d) => d.name === 'shop.example.org')!;
    expect(added.id).toMatch(UUID);
    expect(added.uses_provider_dns).toBe(true);
    const record = await client.call(
      'createDnsRecord',
      { domain_id: added.id },
      { type: 'A', name: 'www.shop.example.org', ttl: 300, resource_records: [{ value: '203.0.113.10' }] },
    );
    expectAccepted(record, 'domains:create-dns-record');
    expect(sim.fleet.domains.get(added.id)!.records).toEqual([
      { type: 'A', name: 'www.shop.example.org', ttl: 300, resource_records: [{ value: '203.0.113.10' }] },
    ]);
  });

  it('creates, clones and pushes environments, and creates a plain environment and a plain site', async () => {
    const { sim, client } = await start({ operationDelayMs: 0 });
    const site = [...sim.fleet.sites.values()].find((s) => s.envIds.length === 2)!;
    const [live, staging] = site.envIds;
    expectAccepted(
      await client.call(
        'createEnvironment',
        { site_id: site.id },
        {
          display_name: 'dev',
          site_title: 'Dev',
          admin_email: 'ops@example.com',
          admin_password: 'correct horse',
          admin_user: 'ops',
          wp_language: 'en_US',
          is_multisite: false,
        },
      ),
      'environment:add',
    );
    expectAccepted(
      await client.call('cloneEnvironment', { site_id: site.id }, { display_name: 'qa', is_premium: false, source_env_id: live! }),
      'environment:clone',
    );
    expectAccepted(await client.call('createPlainEnvironment', { site_id: site.id }, { display_name: 'bare', is_premium: false }), 'environment:clone');
    expectAccepted(
      await client.call(
        'pushEnvironment',
        { site_id: site.id },
        {
          source_env_id: staging!,
          target_env_id: live!,
          push_db: true,
          push_files: true,
          run_search_and_replace: true,
          push_files_option: 'SPECIFIC_FILES',
          file_list: ['wp-content/themes'],
        },
      ),
      'environments:push',
    );
    expectAccepted(await client.call('createPlainSite', {}, { company: sim.companyId, display_name: 'new-site', region: 'us-central1' }), 'sites:add-plain');
    const names = site.envIds.map((id) => sim.fleet.environments.get(id)!.displayName);
    expect(names).toEqual(expect.arrayContaining(['live', 'staging', 'dev', 'qa', 'bare']));
    expect([...sim.fleet.sites.values()].some((s) => s.displayName === 'new-site')).toBe(true);
  });

  it('reads the SSH config with the spec shape', async () => {
    const { sim, client } = await start();
    const site = [...sim.fleet.sites.values()][0]!;
    const config = await read(client, 'getSshConfig', { site_id: site.id, env_id: site.envIds[0]! });
    expect(config.site.environment.id).toBe(site.envIds[0]);
    for (const k of ['port', 'name', 'host', 'user', 'ssh_command'] as const) expect(typeof config[k]).toBe('string');
    for (const k of ['id', 'lxdSshPort'] as const) expect(typeof config.site.environment.activeContainer[k]).toBe('string');
    expect(typeof config.site.environment.activeContainer.loadBalancer.extIP).toBe('string');
    expect(typeof config.site.usr).toBe('string');
  });

  it('changes PHP, SFTP accounts, SSH status and expiration, denied IPs, and runs WP-CLI', async () => {
    const { sim, client } = await start({ operationDelayMs: 0 });
    const { env } = await firstEnv(client, sim.companyId);
    const state = sim.fleet.environments.get(env.id)!;
    const php = await client.call('modifyPhpVersion', {}, { environment_id: env.id, php_version: '8.3', is_opt_out_from_automatic_php_update: true });
    expectAccepted(php, 'php:modify-version');
    expect(state.phpVersion).toBe('8.3');
    expectAccepted(await client.call('toggleSftpAccounts', { env_id: env.id }, { enabled: true }), 'sftp-accounts:toggle-status');
    expect(state.sftpAccountsEnabled).toBe(true);
    expectAccepted(await client.call('runWpCliCommand', { env_id: env.id }, { wp_command: 'wp cache flush' }), 'environment:run-wp-cli-command');
    expect(state.wpCommands).toEqual(['wp cache flush']);
    expect((await client.call('setSshStatus', { env_id: env.id }, { is_enabled: false })).data).toEqual({ result: null });
    expect(state.sshEnabled).toBe(false);
    expect((await client.call('setSshExpiration', { env_id: env.id }, { exp_interval: 'days_7' })).data).toEqual({ result: null });
    expect(state.sshExpInterval).toBe('days_7');
    expect((await client.call('setDeniedIps', {}, { environment_id: env.id, ip_list: ['203.0.113.7', '198.51.100.0/32', '2001:db8::1'] })).data).toEqual({
      result: null,
    });
    expect(state.deniedIps).toEqual(['203.0.113.7', '198.51.100.0/32', '2001:db8::1']);
  });

  it('creates an admin user and returns a login link for it', async () => {
    const { sim, client } = await start();
    const { env } = await firstEnv(client, sim.companyId);
    const user = { email: 'ops@example.com', first_name: 'Op', last_name: 'Erator' };
    expect((await client.call('createAdminUser', { env_id: env.id }, user)).data).toEqual({ create_wp_admin_user: true });
    expect((await client.call('createAdminUser', { env_id: env.id }, user)).data).toEqual({ create_wp_admin_user: false });
    const { data } = await client.call('getLoginUrl', { env_id: env.id }, { email: 'ops@example.com' });
    expect(data).toMatchObject({ login_link: expect.any(String) });
    expect(new URL((data as { login_link: string }).login_link).searchParams.get('sso_token')).toMatch(/^[0-9a-f]{32}$/);
  });

  it('sends the bearer token and JSON content type, and a GET body only for the theme listing', async () => {
    const { sim, client } = await start();
    await client.call('listThemes', { id: sim.companyId }, { limit: 5 });
    await client.call('listApiKeys', { id: sim.companyId });
    expect(sim.log.map((e) => [e.method, e.path, e.status, e.body])).toEqual([
      ['GET', `/v2/company/${sim.companyId}/wp-themes`, 200, { limit: 5 }],
      ['GET', `/v2/company/${sim.companyId}/api-keys`, 200, undefined],
    ]);
  });
});

describe('request validation refuses bad bodies before sending', () => {
  const envId = '6f1c3e4a-8b2d-4c1e-9a7f-0123456789ab';
  const cases: [string, (c: HostingClient) => Promise<unknown>, string][] = [
    ['wp_command outside the pattern', (c) => c.call('runWpCliCommand', { env_id: envId }, { wp_command: 'wp plugin install x; rm -rf /' }), 'body.wp_command'],
    ['wp_command not starting with wp', (c) => c.call('runWpCliCommand', { env_id: envId }, { wp_command: 'ls -la' }), 'body.wp_command'],
    ['wp_command over 5000 characters', (c) => c.call('runWpCliCommand', { env_id: envId }, { wp_command: `wp ${'a'.repeat(5000)}` }), 'body.wp_command'],
    ['an IP that is not an IP', (c) => c.call('setDeniedIps', {}, { environment_id: envId, ip_list: ['203.0.113.7', '999.1.1.1'] }), 'body.ip_list.1'],
    ['an IPv4 prefix out of range', (c) => c.call('setDeniedIps', {}, { environment_id: envId, ip_list: ['10.0.0.0/33'] }), 'body.ip_list.0'],
    ['a non-UUID environment id', (c) => c.call('modifyPhpVersion', {}, { environment_id: 'env-1', php_version: '8.3' }), 'body.environment_id'],
    ['a PHP version not major.minor', (c) => c.call('modifyPhpVersion', {}, { environment_id: envId, php_version: '8' }), 'body.php_version'],
    ['a locale not xx_XX', (c) => c.call('createEnvironment', { site_id: envId }, { display_name: 'x', wp_language: 'english' }), 'body.wp_language'],
    ['an invalid e-mail', (c) => c.call('createAdminUser', { env_id: envId }, { email: 'not-an-email', first_name: 'a', last_name: 'b' }), 'body.email'],
    [
      'an unknown push_files_option',
      (c) => c.call('pushEnvironment', { site_id: envId }, { source_env_id: envId, target_env_id: envId, push_files_option: 'SOME' }),
      'body.push_files_option',
    ],
    [
      'SPECIFIC_FILES without file_list',
      (c) => c.call('pushEnvironment', { site_id: envId }, { source_env_id: envId, target_env_id: envId, push_files_option: 'SPECIFIC_FILES' }),
      'body.file_list',
    ],
    ['an unknown field', (c) => c.call('addManualBackup', { env_id: envId }, { tag: 'x', colour: 'red' }), 'body.colour'],
    ['a missing required field', (c) => c.call('setSshExpiration', { env_id: envId }, {}), 'body.exp_interval'],
    ['a wrong type', (c) => c.call('setSshStatus', { env_id: envId }, { is_enabled: 'yes' }), 'body.is_enabled'],
    [
      'an A record that is not IPv4',
      (c) => c.call('createDnsRecord', { domain_id: envId }, { type: 'A', name: 'a.example.com', resource_records: [{ value: 'example.org' }] }),
      'body.resource_records.0.value',
    ],
  ];
  it.each(cases)('%s', async (_, call, path) => {
    const { sim, client } = await start();
    const error = await call(client).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RequestValidationError);
    expect((error as RequestValidationError).problems.map((p) => p.path)).toContain(path);
    expect(sim.log).toEqual([]);
  });
});
