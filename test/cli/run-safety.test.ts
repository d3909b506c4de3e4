import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { Report } from '../../src/report/report.js';
import { runCli, simEnv, tempDir, writePlaybook } from '../helpers/cli.js';
import { busiestWindow, useSimulator } from '../helpers/sim.js';

const start = useSimulator();

describe('rate limit', () => {
  it('a 200-call run at the simulator’s own limit gets no 429 and never exceeds the limit in any window', async () => {
    // Time scaled down: 20 calls per 200 ms is the shape of 120/min (sent in ten windows and more), 300 times faster.
    const { sim } = await start({ sites: 120, themes: 4, rate: '20/200ms', operationDelayMs: 0 });
    expect(sim.fleet.environments.size).toBeGreaterThanOrEqual(200);
    const dir = tempDir();
    const playbook = writePlaybook(
      `version: 1\nname: r\nsettings: { rate_limit: 20/200ms, concurrency: 16 }\ntasks:\n  - { name: ips, action: denied_ips.set, target: all, with: { ip_list: ["203.0.113.7"] } }\n`,
      dir,
    );
    const result = await runCli(['run', playbook, '--yes', '--report', join(dir, 'r.json')], simEnv(sim));
    expect(result.code).toBe(0);
    const writes = sim.log.filter((e) => e.method === 'PUT');
    expect(writes.length).toBe(sim.fleet.environments.size);
    expect(sim.log.filter((e) => e.status === 429)).toEqual([]);
    expect(
      busiestWindow(
        sim.log.map((e) => e.at),
        200,
      ),
    ).toBeLessThanOrEqual(20);
  });
});

describe('bad input exits 2 with a pointed message and sends nothing', () => {
  const cases: [string, string, RegExp][] = [
    ['broken YAML', 'version: 1\nname: x\ntasks: [\n', /playbook\.yaml:\d+:\d+: \(root\): YAML: /],
    [
      'an invalid IP',
      'version: 1\nname: x\ntasks:\n  - { name: a, action: denied_ips.set, target: all, with: { ip_list: ["1.2.3"] } }\n',
      /playbook\.yaml:4:\d+: tasks\.0\.with\.ip_list\.0: "1\.2\.3" is not a valid IP entry/,
    ],
    [
      'a wp_command outside the pattern',
      'version: 1\nname: x\ntasks:\n  - { name: a, action: wp_cli.run, target: all, with: { wp_command: "wp eval \\"phpinfo();\\"" } }\n',
      /tasks\.0\.with\.wp_command: .* does not match A WP-CLI command/,
    ],
  ];
  it.each(cases)('%s', async (_, text, message) => {
    const { sim } = await start();
    const result = await runCli(['run', writePlaybook(text), '--yes'], simEnv(sim));
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(message);
    expect(sim.log).toEqual([]);
  });

  it('an unknown environment id selects nothing: exit 2 before any write', async () => {
    const { sim } = await start();
    const text =
      'version: 1\nname: x\ntasks:\n  - name: a\n    action: backups.create\n    target: { ids: ["6f1c3e4a-8b2d-4c1e-9a7f-0123456789ab"] }\n    with: { tag: x }\n';
    const result = await runCli(['run', writePlaybook(text), '--yes'], simEnv(sim));
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/playbook\.yaml:6:13: tasks\.0\.target: task "a" selects nothing in this fleet \(set allow_empty: true/);
    expect(sim.log.filter((e) => e.method !== 'GET')).toEqual([]);
  });

  it('no token, no base URL, or no --yes off a terminal: exit 2, nothing sent', async () => {
    const { sim } = await start();
    const file = writePlaybook('version: 1\nname: x\ntasks:\n  - { name: a, action: backups.create, target: all, with: { tag: x } }\n');
    const noToken = await runCli(['run', file, '--yes'], { ...simEnv(sim), SITEFLEET_TOKEN: '' });
    expect([noToken.code, noToken.stderr.trim()]).toEqual([2, 'sitefleet: no API token: set SITEFLEET_TOKEN or pass --token-file FILE']);
    const noUrl = await runCli(['run', file, '--yes'], { ...simEnv(sim), SITEFLEET_BASE_URL: '' });
    expect(noUrl.code).toBe(2);
    expect(noUrl.stderr).toContain('no API base URL');
    const plainHttp = await runCli(['run', file, '--yes', '--base-url', 'http://api.example.com'], simEnv(sim));
    expect(plainHttp.code).toBe(2);
    expect(plainHttp.stderr).toContain('uses plain http');
    const noYes = await runCli(['run', file], simEnv(sim));
    expect(noYes.code).toBe(2);
    expect(noYes.stderr).toContain('refusing to run without --yes');
    expect(sim.log.filter((e) => e.method !== 'GET')).toEqual([]);
    const badFlag = await runCli(['run', file, '--concurrency', 'lots'], simEnv(sim));
    expect(badFlag.code).toBe(2);
  });

  it('reads the token from --token-file', async () => {
    const { sim } = await start();
    const dir = tempDir();
    const tokenFile = join(dir, 'token');
    (await import('node:fs')).writeFileSync(tokenFile, `${sim.token}\n`, { mode: 0o600 });
    const result = await runCli(['inventory', '--format', 'json', '--token-file', tokenFile], { ...simEnv(sim), SITEFLEET_TOKEN: '' });
    expect(result.code).toBe(0);
  });
});

describe('authentication', () => {
  it('a bad token stops before anything is sent: exit 3, without the token in the message', async () => {
    const { sim } = await start();
    const file = writePlaybook('version: 1\nname: x\ntasks:\n  - { name: a, action: backups.create, target: all, with: { tag: x } }\n');
    const result = await runCli(['run', file, '--yes'], { ...simEnv(sim), SITEFLEET_TOKEN: 'not-the-right-token' });
    expect(result.code).toBe(3);
    expect(result.stderr).toMatch(/answered 401/);
    expect(result.stderr).not.toContain('not-the-right-token');
    expect(sim.log).toHaveLength(1);
  });

  it('a 401 mid-run stops everything at once, without a retry storm; unsent steps end skipped', async () => {
    const { sim } = await start({ sites: 60, operationDelayMs: 0, latencyMs: [5, 10] });
    const dir = tempDir();
    const file = writePlaybook(
      'version: 1\nname: x\nsettings: { concurrency: 4, rate_limit: 1000/s }\ntasks:\n  - { name: a, action: backups.create, target: all, with: { tag: x } }\n',
      dir,
    );
    const revoke = setInterval(() => {
      if (sim.log.filter((e) => e.method === 'POST').length >= 20) {
        sim.setToken('revoked-now');
        clearInterval(revoke);
      }
    }, 1);
    const result = await runCli(['run', file, '--yes', '--report', join(dir, 'r.json')], simEnv(sim));
    clearInterval(revoke);
    expect(result.code).toBe(3);
    const unauthorized = sim.log.filter((e) => e.status === 401);
    expect(unauthorized.length).toBeGreaterThan(0);
    expect(unauthorized.length).toBeLessThanOrEqual(4); // at most the calls already in flight
    const report = JSON.parse(readFileSync(join(dir, 'r.json'), 'utf8')) as Report;
    expect(report.stopped?.kind).toBe('auth');
    expect(report.summary.skipped).toBeGreaterThan(0);
    expect(report.summary.accepted).toBe(sim.log.filter((e) => e.status === 202).length);
    expect(report.summary.unknown).toBe(0);
  });
});
