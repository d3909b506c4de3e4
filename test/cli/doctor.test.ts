import { chmodSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { keyFindings } from '../../src/run/api-keys.js';
import { runCli, simEnv, tempDir, writePlaybook } from '../helpers/cli.js';
import { useSimulator } from '../helpers/sim.js';
import { useReceiver } from '../helpers/receiver.js';

const start = useSimulator();
const receive = useReceiver();

describe('sitefleet doctor', () => {
  it('checks a playbook’s ping, webhooks and metrics file without sending them anything, and names no URL', async () => {
    const { sim } = await start({ sites: 2 });
    const receiver = await receive();
    const dir = tempDir();
    const file = writePlaybook(
      `version: 1\nname: n\nsettings:\n  ping: "\${HC_URL}"\n  metrics_file: ${JSON.stringify(join(dir, 'sitefleet.prom'))}\n` +
        '  notify:\n    - { url: "${HOOK}", format: slack }\n    - { url: "${HOOK}", secret: "${HOOK_SECRET}" }\n    - { url: "${NOWHERE}" }\ntasks:\n  - { name: b, action: backups.create, target: all, with: { tag: n } }\n',
      dir,
    );
    const env = {
      ...simEnv(sim),
      HC_URL: `${receiver.url}/ping/secret-ping-1`,
      HOOK: `${receiver.url}/hook/secret-hook-2`,
      NOWHERE: 'https://nowhere.invalid/x',
    };
    const result = await runCli(['doctor', file, '--format', 'json', '--report-dir', dir], env);
    expect(result.code).toBe(3);
    const checks = JSON.parse(result.stdout) as { check: string; status: string; detail: string }[];
    const of = (name: string) => checks.find((c) => c.check === name);
    expect(of('playbook')?.status).toBe('ok');
    expect(of('ping')).toEqual({ check: 'ping', status: 'ok', detail: 'settings.ping (HC_URL): an http URL whose host resolves (nothing sent)' });
    expect(of('webhook 1')?.status).toBe('ok');
    expect(of('webhook 2')).toMatchObject({ status: 'fail', detail: expect.stringContaining('environment variable HOOK_SECRET is not set') });
    expect(of('webhook 3')).toMatchObject({ status: 'fail', detail: expect.stringContaining('its host does not resolve') });
    expect(of('metrics file')?.status).toBe('ok');
    expect(receiver.requests).toEqual([]);
    expect(result.stdout + result.stderr).not.toMatch(/secret-ping-1|secret-hook-2|nowhere\.invalid/);
  });

  it('checks the service, token, company, environments, folders and API keys without writing anything', async () => {
    const { sim } = await start({ sites: 4 });
    const result = await runCli(['doctor', '--format', 'json', '--report-dir', tempDir()], simEnv(sim));
    expect(result.code).toBe(0);
    const checks = JSON.parse(result.stdout) as { check: string; status: string; detail: string }[];
    expect(checks.map((c) => [c.check, c.status])).toEqual([
      ['state dir', 'ok'],
      ['report dir', 'ok'],
      ['service', 'ok'],
      ['token', 'ok'],
      ['company', 'ok'],
      ['environments', 'ok'],
      ['plugin listing', 'ok'],
      ['api keys', 'warn'],
      ['rate limit', 'ok'],
    ]);
    const keys = checks.find((c) => c.check === 'api keys')!.detail;
    expect(keys).toMatch(/"ci-deploy" expires in (9|10) days .*: within 14d/);
    expect(keys).toContain('not active: "old-integration" (expired), "contractor" (revoked)');
    expect(sim.log.filter((e) => e.method !== 'GET')).toEqual([]);
    // --strict turns the warning into exit 1; a shorter warning period finds nothing to say.
    expect((await runCli(['doctor', '--strict'], simEnv(sim))).code).toBe(1);
    const quiet = await runCli(['doctor', '--strict', '--expiry-warning', '5d'], simEnv(sim));
    expect(quiet.code).toBe(0);
    expect(quiet.stdout).toMatch(/^ok\s+api keys\s+4 keys; no active key expires within 5d/m);
  });

  it('checks the company plugin listing with one read: where it cannot be planned from, a plugin playbook is warned of the reads per environment', async () => {
    const dir = tempDir();
    const plugins = writePlaybook('version: 1\nname: p\ntasks:\n  - { name: plugins, action: plugins.update, target: all }\n', dir, 'plugins.yaml');
    const themes = writePlaybook('version: 1\nname: t\ntasks:\n  - { name: themes, action: themes.update, target: all }\n', dir, 'themes.yaml');
    const served = await start({ sites: 2 });
    const ok = await runCli(['doctor', plugins, '--format', 'json', '--report-dir', dir], simEnv(served.sim));
    const listing = (out: string) => (JSON.parse(out) as { check: string; status: string; detail: string }[]).find((c) => c.check === 'plugin listing');
    expect(listing(ok.stdout)).toMatchObject({
      status: 'ok',
      detail: expect.stringMatching(/^the company plugin listing is served: \d+ plugins, one read a page$/),
    });
    for (const pluginListing of ['absent', 'no-ids'] as const) {
      const { sim } = await start({ sites: 2, pluginListing });
      const reads = () => sim.log.filter((e) => e.path.endsWith('/wp-plugins')).length;
      const warned = await runCli(['doctor', plugins, '--format', 'json', '--report-dir', dir], simEnv(sim));
      expect(reads()).toBe(1);
      expect(listing(warned.stdout)).toMatchObject({
        status: 'warn',
        detail: expect.stringMatching(/: a plugin task reads each environment's own listing, one read per environment it selects$/),
      });
      expect(listing(warned.stdout)!.detail).toContain(
        pluginListing === 'absent' ? 'does not serve the company plugin listing (404)' : 'names no environment id',
      );
      // A playbook that updates no plugins is told, not warned; without a playbook any may, so it warns.
      const theme = await runCli(['doctor', themes, '--format', 'json', '--report-dir', dir], simEnv(sim));
      expect(listing(theme.stdout)).toMatchObject({ status: 'ok', detail: expect.stringContaining('; no task of this playbook updates plugins') });
      expect(listing((await runCli(['doctor', '--format', 'json', '--report-dir', dir], simEnv(sim))).stdout)?.status).toBe('warn');
      expect(sim.log.filter((e) => e.method !== 'GET')).toEqual([]);
    }
  });

  it('a wrong token, an unreachable service and a folder it cannot write are failures (exit 3), one line each', async () => {
    const { sim } = await start({ sites: 2 });
    const wrong = await runCli(['doctor'], { ...simEnv(sim), SITEFLEET_TOKEN: 'not-the-token' });
    expect(wrong.code).toBe(3);
    expect(wrong.stdout).toMatch(/^fail\s+token\s+refused \(401\)/m);
    expect(wrong.stdout).not.toContain('not-the-token');
    const down = await runCli(['doctor'], { ...simEnv(sim), SITEFLEET_BASE_URL: 'http://127.0.0.1:9' });
    expect(down.code).toBe(3);
    expect(down.stdout).toMatch(/^fail\s+service\s/m);
    const locked = join(tempDir(), 'ro');
    mkdirSync(locked);
    chmodSync(locked, 0o500);
    const ro = await runCli(['doctor', '--report-dir', join(locked, 'sub')], simEnv(sim));
    if (process.getuid?.() !== 0) expect(ro.stdout).toMatch(/^fail\s+report dir/m); // root writes anywhere
    expect((await runCli(['doctor', '--expiry-warning', 'soon'], simEnv(sim))).stderr.trim()).toBe(
      'sitefleet: --expiry-warning "soon" is not a duration such as 14d',
    );
  });

  it('run warns in one line when an active key expires within 7 days, and --no-preflight skips the read', async () => {
    const { sim } = await start({ sites: 2, operationDelayMs: 0 });
    sim.fleet.apiKeys[1]!.expires_at = new Date(Date.now() + 3 * 86_400_000 + 3_600_000).toISOString();
    const file = writePlaybook('version: 1\nname: p\ntasks:\n  - { name: php, action: php.set_version, target: all, with: { php_version: "8.3" } }\n');
    const warned = await runCli(['run', file, '--yes', '--report', join(tempDir(), 'r.json')], simEnv(sim));
    expect(warned.code).toBe(0);
    expect(warned.stderr).toMatch(/^sitefleet: warning: API key "ci-deploy" expires in 3 days \(.*\); renew it before it stops scheduled runs$/m);
    const before = sim.log.filter((e) => e.path.endsWith('/api-keys')).length;
    await runCli(['run', file, '--yes', '--no-preflight', '--report', join(tempDir(), 'r.json')], simEnv(sim));
    expect(sim.log.filter((e) => e.path.endsWith('/api-keys')).length).toBe(before);
  });

  it('key findings: active keys within the period, soonest first; inactive ones listed', () => {
    const now = Date.parse('2026-11-22T00:00:00Z');
    const keys = [
      { id: 'a', name: 'later', status: 'active', expires_at: '2026-12-01T00:00:00.000Z' },
      { id: 'b', name: 'soon', status: 'active', expires_at: '2026-11-23T12:00:00.000Z' },
      { id: 'c', name: 'far', status: 'active', expires_at: '2027-11-22T00:00:00.000Z' },
      { id: 'd', name: 'gone', status: 'expired', expires_at: '2026-01-01T00:00:00.000Z' },
    ];
    const f = keyFindings(keys, now, 14 * 86_400_000);
    expect(f.expiring.map((k) => [k.name, k.days])).toEqual([
      ['soon', 1],
      ['later', 9],
    ]);
    expect(f.inactive).toEqual([{ name: 'gone', status: 'expired' }]);
  });
});
