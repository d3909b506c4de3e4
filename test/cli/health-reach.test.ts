import { readFileSync } from 'node:fs';
import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { Report } from '../../src/report/report.js';
import type { Simulator } from '../../src/sim/server.js';
import { runCli, simEnv, tempDir, writePlaybook } from '../helpers/cli.js';
import { useSimulator } from '../helpers/sim.js';

const start = useSimulator();

/** A server on 127.0.0.1 standing for what this machine serves (an admin console, a metadata service). */
let machine: { port: number; seen: IncomingMessage[]; stop: () => Promise<void> } | undefined;
afterEach(async () => {
  await machine?.stop();
  machine = undefined;
});
async function serveMachine(): Promise<{ port: number; seen: IncomingMessage[] }> {
  const seen: IncomingMessage[] = [];
  const server = createServer((req, res) => {
    seen.push(req);
    res.end('<p>internal</p>');
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  machine = {
    port: (server.address() as AddressInfo).port,
    seen,
    stop: () => {
      server.closeAllConnections();
      return new Promise((r) => server.close(() => r()));
    },
  };
  return machine;
}

/** The live environments with an update of `theme` available: what the playbook below targets. */
function liveWithUpdate(sim: Simulator, theme: string): string[] {
  const latest = sim.fleet.catalog.get(theme)!.versions.at(-1);
  return [...sim.fleet.environments.values()]
    .filter((e) => e.displayName === 'live' && e.themes.has(theme) && e.themes.get(theme)!.version !== latest)
    .map((e) => e.id);
}

function themeWithUpdates(sim: Simulator): string {
  return [...sim.fleet.catalog.keys()].sort((a, b) => liveWithUpdate(sim, b).length - liveWithUpdate(sim, a).length)[0]!;
}

function playbook(theme: string, health: string): string {
  return writePlaybook(`version: 1
name: reach
tasks:
  - name: update ${theme}
    action: themes.update
    target: { environment: live, theme: ${theme} }
    with: { themes: ${theme}, skip_vulnerable_updates: false }
    health: { ${health}, attempts: 1 }
    max_failures: 100%
`);
}

async function run(sim: Simulator, file: string): Promise<{ code: number | null; output: string; report: Report }> {
  const reportPath = join(tempDir(), 'r.json');
  const result = await runCli(['run', file, '--yes', '--poll-interval', '50', '--report', reportPath], simEnv(sim));
  return { code: result.code, output: result.stdout + result.stderr, report: JSON.parse(readFileSync(reportPath, 'utf8')) as Report };
}

const updates = (sim: Simulator) => sim.log.filter((e) => e.endpoint === 'bulkUpdateThemes');

describe('health checks never reach the machine’s own network', () => {
  it('a domain the service lists as an IP address (any notation) or as localhost is refused: no check is sent there, nor the write', async () => {
    const { sim } = await start({ sites: 16, themes: 4, seed: 3 });
    const theme = themeWithUpdates(sim);
    const envs = liveWithUpdate(sim, theme);
    const hostile = ['2130706433', 'localhost', '0x7f.1', '127.1', '0177.0.0.1'];
    expect(envs.length).toBeGreaterThanOrEqual(3);
    envs.forEach((id, i) => (sim.fleet.environments.get(id)!.domains[0]!.name = hostile[i % hostile.length]!));
    const { port, seen } = await serveMachine();
    const file = playbook(theme, `url: "http://{{domain}}:${port}/"`);

    const plan = await runCli(['plan', file, '-v'], simEnv(sim));
    expect(plan.code).toBe(0);
    expect(plan.stdout).toContain('0 calls would be sent');
    expect(plan.stdout).toContain(
      'health: domain "2130706433" is an IP address (127.0.0.1), not a host on the internet; not updated (on_missing_domain: skip)',
    );
    expect(plan.stdout).toContain('health: domain "localhost" names this machine (localhost), not a host on the internet');

    const { code, report } = await run(sim, file);
    expect(code).toBe(0);
    expect(report.results.filter((r) => r.reason?.startsWith('health: domain '))).toHaveLength(envs.length);
    expect(updates(sim)).toHaveLength(0);
    expect(seen).toHaveLength(0);
  });

  it('a name that resolves to a loopback address is refused at run time (the write is not sent); allow_private: true checks it', async () => {
    const { sim } = await start({ sites: 16, themes: 4, seed: 3 });
    const theme = themeWithUpdates(sim);
    const envs = liveWithUpdate(sim, theme);
    // `localhost` resolves to the machine itself everywhere, offline too: the simulator's sites answer there.
    const url = sim.siteUrl.replace('127.0.0.1', 'localhost');
    const refused = await run(sim, playbook(theme, `url: "${url}"`));
    expect(refused.code).toBe(0);
    expect(updates(sim)).toHaveLength(0);
    expect(sim.siteLog).toHaveLength(0);
    const results = refused.report.results.filter((r) => r.step_id !== null);
    expect(results).toHaveLength(envs.length);
    for (const r of results) {
      expect(r).toMatchObject({ status: 'skipped', attempts: 0 });
      expect(r.reason).toMatch(
        /^health: not checked: localhost resolves to (127\.0\.0\.1|::1), a loopback address \(health\.allow_private: true allows it\) at http:\/\/localhost:\d+\/sites\/.+; not updated \(on_missing_domain: skip\)$/,
      );
    }

    const failed = await run(sim, playbook(theme, `url: "${url}", on_missing_domain: fail`));
    expect(failed.code).toBe(1);
    expect(failed.report.results.filter((r) => r.step_id !== null).every((r) => r.status === 'failed')).toBe(true);
    expect(updates(sim)).toHaveLength(0);

    const allowed = await run(sim, playbook(theme, `url: "${url}", allow_private: true`));
    expect(allowed.code).toBe(0);
    expect(allowed.report.results.filter((r) => r.step_id !== null).map((r) => [r.status, r.health?.outcome])).toEqual(
      envs.map(() => ['succeeded', 'healthy']),
    );
    expect(updates(sim)).toHaveLength(envs.length);
    expect(sim.siteLog).toHaveLength(2 * envs.length);
  });
});
