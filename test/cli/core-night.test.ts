import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { Plan } from '../../src/plan/plan.js';
import type { Report } from '../../src/report/report.js';
import type { Simulator } from '../../src/sim/server.js';
import { runCli, simEnv, tempDir, writePlaybook } from '../helpers/cli.js';
import { useSimulator } from '../helpers/sim.js';

const start = useSimulator();
const DAY = 86_400_000;

const playbook = (task: string) =>
  `version: 1\nname: core\nsettings: { rate_limit: 50/s }\ntasks:\n  - name: wp\n    action: core.update\n    target: { environment: live }\n${task}`;

async function night(sim: Simulator, task: string, dir = tempDir(), now?: () => number) {
  const reportPath = join(dir, `r-${Math.random().toString(36).slice(2)}.json`);
  const env = { ...simEnv(sim), SITEFLEET_STATE_DIR: dir };
  const result = await runCli(['run', writePlaybook(playbook(task), dir), '--yes', '--poll-interval', '20', '--report', reportPath], env, now ? { now } : {});
  return { ...result, report: JSON.parse(readFileSync(reportPath, 'utf8')) as Report };
}

const live = (sim: Simulator) => [...sim.fleet.environments.values()].filter((e) => e.displayName === 'live');

describe('core.update against the simulator', () => {
  it('moves every live environment to the newest version with one command each, each step naming the version read back; a second plan sends nothing', async () => {
    const { sim } = await start({ sites: 6, seed: 3, operationDelayMs: 0 });
    const newest = '6.7.2';
    const behind = live(sim).filter((e) => e.wordpressVersion !== newest);
    expect(behind.length).toBeGreaterThan(0);
    const before = sim.log.length;
    const { code, report } = await night(sim, '    with: { max_bump: major }\n');
    expect(code).toBe(0);
    const writes = report.results.filter((r) => r.step_id);
    expect(writes.map((r) => [r.request?.body, r.status, r.runs])).toEqual(
      behind.map(() => [{ wp_command: `wp core update --version=${newest}` }, 'succeeded', [{ name: 'wordpress', version: newest }]]),
    );
    expect(live(sim).every((e) => e.wordpressVersion === newest)).toBe(true);
    // Two commands each (the update, then its database step), and the site listing read once to plan and once to read every step back.
    const calls = sim.log.slice(before);
    expect(calls.filter((c) => c.endpoint === 'runWpCliCommand')).toHaveLength(2 * behind.length);
    expect(calls.filter((c) => c.endpoint === 'listSites')).toHaveLength(2);
    const out = join(tempDir(), 'plan.json');
    expect((await runCli(['plan', writePlaybook(playbook('')), '--out', out], simEnv(sim))).code).toBe(0);
    expect((JSON.parse(readFileSync(out, 'utf8')) as Plan).steps).toEqual([]);
  });

  it('a command that succeeded while the version did not move is a failed step, not_updated, saying so', async () => {
    const { sim } = await start({ sites: 3, seed: 3, operationDelayMs: 0, coreUpdateNoop: true });
    const { code, report } = await night(sim, '');
    expect(code).toBe(1);
    const failed = report.results.filter((r) => r.step_id);
    expect(failed.length).toBeGreaterThan(0);
    for (const r of failed) {
      const was = sim.fleet.environments.get(r.target.env_id!)!.wordpressVersion!;
      expect(r).toMatchObject({
        status: 'failed',
        reason: `wordpress stays on ${was}: the service ran the update, the site did not move; WordPress's files may not be writable by the update: look at the site`,
        failure: { code: 'not_updated', stays: [{ name: 'wordpress', version: was }] },
        runs: [{ name: 'wordpress', version: was }],
      });
    }
  });

  it('a version that breaks the canary is restored from its backup and the rollout stops', async () => {
    const { sim } = await start({ sites: 6, seed: 3, operationDelayMs: 0, breakCore: ['6.7.2'] });
    const behind = live(sim).filter((e) => e.wordpressVersion !== '6.7.2');
    const task = `    backup_first: true\n    health: { url: "${sim.siteUrl}", attempts: 2, interval: 50ms, on_broken: restore }\n    max_failures: 0\n    rollout: { canary: 1, waves: ["100%"] }\n`;
    const { code, report } = await night(sim, task);
    // The failure budget (max_failures: 0) stopped the run at the canary: exit 3.
    expect(code).toBe(3);
    const writes = report.results.filter((r) => r.step_id && !r.step_id.endsWith(':backup'));
    const canary = writes.find((r) => r.status === 'failed')!;
    expect(canary).toMatchObject({ health: { outcome: 'unhealthy' }, restored: { status: 'succeeded' } });
    expect(writes.filter((r) => r.status === 'skipped')).toHaveLength(behind.length - 1);
    // Back on the version it ran: the one the listing showed before the night.
    const env = sim.fleet.environments.get(canary.target.env_id!)!;
    expect(env.wordpressVersion).not.toBe('6.7.2');
  });

  it('release age holds a new version on a fresh state folder, and sends it once it has aged', async () => {
    const { sim } = await start({ sites: 4, seed: 3, operationDelayMs: 0 });
    const dir = tempDir();
    const t0 = Date.parse('2026-11-20T02:00:00.000Z');
    const held = await night(sim, '    with: { min_release_age: 3d }\n', dir, () => t0);
    expect(held.code).toBe(0);
    expect(held.report.results.filter((r) => r.step_id)).toEqual([]);
    const ages = held.report.results.flatMap((r) => r.release_age ?? []);
    expect(ages.length).toBeGreaterThan(0);
    expect(ages.every((d) => 'core' in d && d.code === 'age_pending')).toBe(true);
    const aged = await night(sim, '    with: { min_release_age: 3d }\n', dir, () => t0 + 3 * DAY);
    expect(aged.report.results.filter((r) => r.step_id).every((r) => r.status === 'succeeded')).toBe(true);
    expect(aged.report.results.filter((r) => r.step_id).length).toBeGreaterThan(0);
  });

  it('inventory shows each environment’s WordPress; exposure the ones behind by another x.y release', async () => {
    const { sim } = await start({ sites: 6, seed: 3 });
    const csv = await runCli(['inventory', '--format', 'csv'], simEnv(sim));
    const rows = csv.stdout.split('\n').filter((l) => l.includes(',core,wordpress,'));
    expect(rows).toHaveLength(sim.fleet.environments.size);
    const exposure = JSON.parse((await runCli(['inventory', '--exposure', '--format', 'json'], simEnv(sim))).stdout) as {
      items: { core?: string; environments: { version: string }[] }[];
    };
    const core = exposure.items.find((i) => i.core === 'wordpress')!;
    const far = [...sim.fleet.environments.values()].filter((e) => !e.wordpressVersion!.startsWith('6.7.'));
    expect(core.environments.map((e) => e.version).sort()).toEqual(far.map((e) => e.wordpressVersion).sort());
  });

  it('a service that serves no site listing: core.update is refused naming the task, and nothing is sent', async () => {
    const { sim } = await start({ sites: 2, seed: 3, siteListing: false });
    const res = await runCli(['run', writePlaybook(playbook('')), '--yes'], simEnv(sim));
    expect(res.code).toBe(2);
    expect(res.stderr).toMatch(
      /playbook\.yaml:\d+:\d+: tasks\.0\.action: core\.update cannot be planned: the service serves no site listing \(GET \/sites answered 404\)/,
    );
    expect(sim.log.filter((c) => c.method !== 'GET')).toEqual([]);
  });

  it('a release only the playbook names ages from the first plan that named it, not from every plan', async () => {
    const { sim } = await start({ sites: 3, seed: 3, operationDelayMs: 0, coreLatest: '7.0.0' });
    const dir = tempDir();
    const t0 = Date.parse('2026-11-20T02:00:00.000Z');
    const task = '    with: { versions: ["7.0.0"], min_release_age: 3d }\n';
    const first = await night(sim, task, dir, () => t0);
    expect(first.report.results.filter((r) => r.step_id)).toEqual([]);
    expect(first.report.results.flatMap((r) => r.release_age ?? []).every((d) => d.first_seen === new Date(t0).toISOString())).toBe(true);
    const later = await night(sim, task, dir, () => t0 + 3 * DAY);
    const sent = later.report.results.filter((r) => r.step_id);
    expect(sent.length).toBe(live(sim).length);
    expect(sent.every((r) => r.status === 'succeeded' && r.runs?.[0]?.version === '7.0.0')).toBe(true);
  });
});
