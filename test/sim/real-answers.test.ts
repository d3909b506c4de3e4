import { describe, expect, it } from 'vitest';
import { BLOCKED_MESSAGE } from '../../src/sim/operations.js';
import type { SimulatorOptions } from '../../src/sim/server.js';
import { UUID, useSimulator } from '../helpers/sim.js';
import { call, operation, runToEnd } from './http.js';

const start = useSimulator();
/** Operations finish at once and are visible at once; creating calls are not what these tests are about. */
const AT_ONCE: SimulatorOptions = { operationDelayMs: 0, operationVisibleAfterMs: 0, createRate: '100/s' };
const real = (options: SimulatorOptions = {}) => start({ profile: 'real', ...AT_ONCE, ...options });
const spec = (options: SimulatorOptions = {}) => start({ profile: 'spec', ...AT_ONCE, ...options });
const OUTER = 'Operation failed! Please refer to `data` for more details.';
const uuidOf = (id: string) => id.slice(-36);

describe('a failed operation', () => {
  it('real: HTTP 200, the outer message the recordings show, and the reason nested in data', async () => {
    const { sim } = await real({ failOperations: 1 });
    const env = [...sim.fleet.environments.values()][0]!;
    const { done } = await runToEnd(sim, 'PUT', '/sites/tools/modify-php-version', { environment_id: env.id, php_version: '8.4' });
    expect(done.status).toBe(200);
    expect(done.body).toEqual({
      status: 500,
      message: OUTER,
      data: { status: 500, message: expect.stringMatching(/^php:modify-version failed on /), data: null },
    });
    expect(env.phpVersion).not.toBe('8.4');
  });

  it('real: an environment busy with another operation fails the next one with the blocked reason, nested', async () => {
    const { sim } = await real({ operationDelayMs: 60_000 });
    const env = [...sim.fleet.environments.values()][0]!;
    await call(sim, 'POST', `/sites/environments/${env.id}/manual-backups`, { tag: 'first' });
    const second = await call(sim, 'POST', `/sites/environments/${env.id}/manual-backups`, { tag: 'second' });
    expect(second.status).toBe(202);
    const told = await operation(sim, second.body.operation_id);
    expect(told).toEqual({ status: 200, body: { status: 500, message: OUTER, data: { status: 500, message: BLOCKED_MESSAGE, data: null } } });
    expect(sim.log.find((e) => e.operation_id === second.body.operation_id && e.endpoint === 'addManualBackup')?.changed).toBe(false);
  });

  it('spec: HTTP 500 with the reason as the message and the operation id in data, as before', async () => {
    const { sim } = await spec({ failOperations: 1 });
    const env = [...sim.fleet.environments.values()][0]!;
    const { accepted, done } = await runToEnd(sim, 'PUT', '/sites/tools/modify-php-version', { environment_id: env.id, php_version: '8.4' });
    expect(done.status).toBe(500);
    expect(done.body).toEqual({
      status: 500,
      message: expect.stringMatching(/^php:modify-version failed on /),
      data: { operation_id: accepted.body.operation_id },
    });
  });
});

describe('a finished operation', () => {
  it('real: creating or cloning an environment says its id in data.idEnv', async () => {
    const { sim } = await real();
    const source = [...sim.fleet.environments.values()][0]!;
    const site = source.siteId;
    const calls: [string, unknown][] = [
      [`/sites/${site}/environments`, { display_name: 'made' }],
      [`/sites/${site}/environments/plain`, { display_name: 'plain' }],
      [`/sites/${site}/environments/clone`, { display_name: 'copy', source_env_id: source.id }],
    ];
    for (const [path, body] of calls) {
      const before = new Set(sim.fleet.environments.keys());
      const { done } = await runToEnd(sim, 'POST', path, body);
      const created = [...sim.fleet.environments.keys()].filter((id) => !before.has(id));
      expect(created).toHaveLength(1);
      expect(done).toEqual({ status: 200, body: { status: 200, message: expect.stringMatching(/ completed$/), data: { idEnv: created[0] } } });
      expect(sim.fleet.environments.get(created[0]!)!.displayName).toBe((body as { display_name: string }).display_name);
    }
  });

  it('real: creating a site says its id in data.idSite; other operations carry data null', async () => {
    const { sim } = await real();
    const { done } = await runToEnd(sim, 'POST', '/sites/plain', { company: sim.companyId, display_name: 'new-site', region: 'europe-west1' });
    expect(done.body).toEqual({ status: 200, message: 'sites:add-plain completed', data: { idSite: expect.stringMatching(UUID) } });
    expect(sim.fleet.sites.get(done.body.data.idSite)?.displayName).toBe('new-site');
    const env = [...sim.fleet.environments.values()][1]!;
    const php = await runToEnd(sim, 'PUT', '/sites/tools/modify-php-version', { environment_id: env.id, php_version: '8.4' });
    expect(php.done).toEqual({ status: 200, body: { status: 200, message: 'php:modify-version completed', data: null } });
    const backup = await runToEnd(sim, 'POST', `/sites/environments/${env.id}/manual-backups`, { tag: 't' });
    expect(backup.done.body).toEqual({ status: 200, message: 'backups:add-manual completed', data: null });
  });

  it('real: a creation that fails creates nothing and carries no id', async () => {
    const { sim } = await real({ failOperations: 1 });
    const sites = sim.fleet.sites.size;
    const { accepted, done } = await runToEnd(sim, 'POST', '/sites/plain', { company: sim.companyId, display_name: 'never', region: 'europe-west1' });
    expect(done.body.message).toBe(OUTER);
    expect(done.body.data).toEqual({ status: 500, message: expect.stringMatching(/^sites:add-plain failed/), data: null });
    expect(sim.fleet.sites.size).toBe(sites);
    expect(sim.operations.all.get(accepted.body.operation_id)!.data).toBeNull();
  });

  it('spec: data is the operation id, as before', async () => {
    const { sim } = await spec();
    const site = [...sim.fleet.sites.keys()][0]!;
    const { accepted, done } = await runToEnd(sim, 'POST', `/sites/${site}/environments`, { display_name: 'made' });
    expect(done).toEqual({ status: 200, body: { status: 200, message: 'environment:add completed', data: { operation_id: accepted.body.operation_id } } });
  });
});

describe('WP-CLI operation ids', () => {
  it('real: accepted as the recording shows, named cli:run-wp-cli-<uuid>, and found by that id URL-encoded or not', async () => {
    const { sim } = await real();
    const env = [...sim.fleet.environments.values()][0]!;
    const accepted = await call(sim, 'POST', `/sites/environments/${env.id}/run-wp-cli-command`, { wp_command: 'wp cache flush' });
    expect(accepted.status).toBe(202);
    expect(accepted.body).toEqual({
      operation_id: expect.stringMatching(/^cli:run-wp-cli-/),
      message: 'Running WP-CLI command in progress. Use the operation_id to check the status.',
      status: 202,
    });
    const id = accepted.body.operation_id as string;
    expect(uuidOf(id)).toMatch(UUID);
    expect(id).toHaveLength('cli:run-wp-cli-'.length + 36);
    expect((await operation(sim, id)).body).toMatchObject({ status: 200, data: { result: 'Success: The cache was flushed.' } });
    expect((await call(sim, 'GET', `/operations/${id}`)).body.status).toBe(200);
    expect(sim.log.filter((e) => e.operation_id === id).map((e) => e.endpoint)).toEqual(['runWpCliCommand', 'getOperation', 'getOperation']);
  });

  it('spec: the kind the spec names, the usual message, and no output', async () => {
    const { sim } = await spec();
    const env = [...sim.fleet.environments.values()][0]!;
    const { accepted, done } = await runToEnd(sim, 'POST', `/sites/environments/${env.id}/run-wp-cli-command`, { wp_command: 'wp core version' });
    expect(accepted).toEqual({
      status: 202,
      body: { message: 'environment:run-wp-cli-command in progress', status: 202, operation_id: expect.stringMatching(/^environment:run-wp-cli-command-/) },
    });
    expect(uuidOf(accepted.body.operation_id)).toMatch(UUID);
    expect(done.body).toEqual({ status: 200, message: 'environment:run-wp-cli-command completed', data: { operation_id: accepted.body.operation_id } });
    expect(env.wpCommands).toEqual(['wp core version']);
  });
});

describe('the SSH config', () => {
  const sshOf = async (sim: Awaited<ReturnType<typeof start>>['sim'], envId: string) => {
    const env = sim.fleet.environments.get(envId)!;
    return call(sim, 'GET', `/sites/${env.siteId}/environments/${env.id}/ssh/config`);
  };

  it('real: flat, {name, host, port, user, ssh_command}, port a string', async () => {
    const { sim } = await real();
    for (const env of sim.fleet.environments.values()) {
      const { status, body } = await sshOf(sim, env.id);
      expect(status).toBe(200);
      expect(Object.keys(body)).toEqual(['name', 'host', 'port', 'user', 'ssh_command']);
      expect(body.port).toEqual(expect.stringMatching(/^\d+$/));
      expect(body.ssh_command).toBe(`ssh -p ${body.port} ${body.user}@${body.host}`);
      expect(body.name).toBe(sim.fleet.sites.get(env.siteId)!.displayName);
    }
  });

  it.each(['real', 'spec'] as const)('%s: hostile names still smuggle a directive into the host or the port', async (profile) => {
    const { sim } = await start({ profile, names: 'hostile', sites: 4 });
    const answers = await Promise.all([...sim.fleet.environments.keys()].map(async (id) => (await sshOf(sim, id)).body));
    expect(answers.some((a) => /ProxyCommand/.test(a.host))).toBe(true);
    expect(answers.some((a) => /ProxyCommand/.test(a.port))).toBe(true);
    for (const a of answers) expect('site' in a).toBe(profile === 'spec');
  });

  it('spec: the site object as the spec shows it, as before', async () => {
    const { sim } = await spec();
    const env = [...sim.fleet.environments.values()][0]!;
    const { body } = await sshOf(sim, env.id);
    expect(body.site).toMatchObject({ id: env.siteId, environment: { id: env.id, activeContainer: { lxdSshPort: body.port } } });
    expect(Object.keys(body)).toEqual(['site', 'port', 'name', 'host', 'user', 'ssh_command']);
  });
});

describe('401', () => {
  it('real: "Unauthenticated." as recorded', async () => {
    const { sim } = await real();
    expect(await call(sim, 'GET', `/company/${sim.companyId}/api-keys`, undefined, 'wrong')).toEqual({
      status: 401,
      body: { status: 401, message: 'Unauthenticated.', data: null },
    });
  });

  it('spec: the text it had', async () => {
    const { sim } = await spec();
    expect(await call(sim, 'GET', `/company/${sim.companyId}/api-keys`, undefined, 'wrong')).toEqual({
      status: 401,
      body: { status: 401, message: 'Unauthorized: missing or invalid API key', data: null },
    });
  });
});

describe('a domain already in use', () => {
  it('real: accepted, logged as changing nothing, then failed with the recorded reason; the fleet stays as it was', async () => {
    const { sim } = await real();
    const [first, second] = [...sim.fleet.environments.values()];
    const taken = first!.domains[0]!.name;
    const domains = sim.fleet.domains.size;
    const { accepted, done } = await runToEnd(sim, 'POST', `/sites/environments/${second!.id}/domains`, { domain_name: taken });
    expect(accepted).toEqual({
      status: 202,
      body: { message: 'sites:add-domain in progress', status: 202, operation_id: expect.stringMatching(/^sites:add-domain-/) },
    });
    expect(done).toEqual({
      status: 200,
      body: { status: 500, message: OUTER, data: { status: 500, message: `This domain "${taken}" is already in use`, data: null } },
    });
    expect(sim.fleet.domains.size).toBe(domains);
    expect(second!.domains.map((d) => d.name)).not.toContain(taken);
    expect(sim.log.find((e) => e.endpoint === 'addDomain')).toMatchObject({ status: 202, operation_id: accepted.body.operation_id, changed: false });
  });

  it('real: a domain not in use is added, and its log entry says it changes the fleet', async () => {
    const { sim } = await real();
    const env = [...sim.fleet.environments.values()][0]!;
    const { done } = await runToEnd(sim, 'POST', `/sites/environments/${env.id}/domains`, { domain_name: 'fresh.example.org' });
    expect(done.body).toEqual({ status: 200, message: 'sites:add-domain completed', data: null });
    expect(env.domains.map((d) => d.name)).toContain('fresh.example.org');
    expect(sim.log.find((e) => e.endpoint === 'addDomain')?.changed).toBe(true);
  });

  it('spec: refused at once with 400, no operation, as before', async () => {
    const { sim } = await spec();
    const [first, second] = [...sim.fleet.environments.values()];
    const taken = first!.domains[0]!.name;
    const refused = await call(sim, 'POST', `/sites/environments/${second!.id}/domains`, { domain_name: taken });
    expect(refused).toEqual({ status: 400, body: { status: 400, message: `domain_name: ${taken} is already in use`, data: null } });
    expect(sim.operations.all.size).toBe(0);
  });
});
