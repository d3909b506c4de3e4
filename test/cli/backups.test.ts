import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { Report } from '../../src/report/report.js';
import { runCli, simEnv, tempDir, writePlaybook } from '../helpers/cli.js';
import { useSimulator } from '../helpers/sim.js';
import { readFileSync } from 'node:fs';

const start = useSimulator();

describe('sitefleet backups: the morning check', () => {
  it('lists the newest backup of each type per environment, and exits 1 naming the ones with nothing younger than --max-age', async () => {
    const { sim } = await start({ sites: 16 });
    const result = await runCli(['backups', '--max-age', '26h', '--format', 'json'], simEnv(sim));
    const rows = JSON.parse(result.stdout) as { env_id: string; fresh: boolean; newest: Record<string, { age_s: number }> }[];
    expect(rows).toHaveLength(sim.fleet.environments.size);
    const now = Date.now();
    for (const row of rows) {
      const env = sim.fleet.environments.get(row.env_id)!;
      const youngest = Math.min(...env.backups.map((b) => now - b.created_at));
      expect(row.fresh, row.env_id).toBe(youngest <= 26 * 3_600_000);
      expect(Object.keys(row.newest).sort()).toEqual([...new Set(env.backups.map((b) => b.type))].sort());
    }
    const stale = rows.filter((r) => !r.fresh).length;
    expect(stale).toBeGreaterThan(0); // the simulator's fleet has some that missed last night
    expect(result.code).toBe(1);
    // Reads only: the listing, then one backup list per environment.
    expect(sim.log.filter((e) => e.method !== 'GET')).toEqual([]);
    expect(sim.log.filter((e) => e.path.endsWith('/backups'))).toHaveLength(rows.length);

    const table = await runCli(['backups', '--max-age', '26h'], simEnv(sim));
    expect(table.stdout).toContain(`${stale} of ${rows.length} environments have no backup younger than 26h`);
    const lenient = await runCli(['backups', '--max-age', '90d', '--format', 'csv'], simEnv(sim));
    expect(lenient.code).toBe(0);
    expect(lenient.stdout.split('\n')[0]).toBe('site,environment,env_id,type,newest,age,fresh');
  });

  it('each row says its own backup’s freshness: a week-old backup is not fresh because another of its environment is', async () => {
    const { sim } = await start({ sites: 16 });
    const result = await runCli(['backups', '--max-age', '26h', '--format', 'csv'], simEnv(sim));
    const rows = result.stdout
      .split('\n')
      .slice(1)
      .map((line) => line.split(','));
    const now = Date.now();
    const old = rows.filter(([, , , , newest]) => newest !== '' && now - Date.parse(newest!) > 26 * 3_600_000);
    const young = rows.filter(([, , , , newest]) => newest !== '' && now - Date.parse(newest!) < 25 * 3_600_000);
    expect(old.length).toBeGreaterThan(0);
    expect(young.length).toBeGreaterThan(0);
    expect(old.map((r) => r[6])).toEqual(old.map(() => 'NO'));
    expect(young.map((r) => r[6])).toEqual(young.map(() => 'yes'));
    // The sim's environments mostly hold a young backup beside an old one: the case the defect hid.
    expect(old.some((r) => young.some((y) => y[2] === r[2]))).toBe(true);
    const json = JSON.parse((await runCli(['backups', '--max-age', '26h', '--format', 'json'], simEnv(sim))).stdout) as {
      newest: Record<string, { age_s: number; fresh: boolean }>;
    }[];
    for (const b of json.flatMap((r) => Object.values(r.newest))) expect(b.fresh).toBe(b.age_s <= 26 * 3600);
  });

  it('takes the selector flags with a playbook selector’s meaning; a bad --max-age exits 2 with one line', async () => {
    const { sim } = await start({ sites: 16 });
    const site = [...sim.fleet.sites.values()][0]!.displayName;
    const result = await runCli(['backups', '--site', `${site.slice(0, 3)}*`, '--environment', 'live', '--format', 'json'], simEnv(sim));
    expect(result.code).toBe(0);
    const rows = JSON.parse(result.stdout) as { site: string; environment: string }[];
    const expected = [...sim.fleet.environments.values()].filter(
      (e) => e.displayName === 'live' && sim.fleet.sites.get(e.siteId)!.displayName.startsWith(site.slice(0, 3)),
    );
    expect(rows).toHaveLength(expected.length);
    expect(rows.every((r) => r.environment === 'live' && r.site.startsWith(site.slice(0, 3)))).toBe(true);
    const bad = await runCli(['backups', '--max-age', 'soon'], simEnv(sim));
    expect(bad.code).toBe(2);
    expect(bad.stderr.trim()).toBe('sitefleet: --max-age "soon" is not a duration such as 26h or 2d');
  });
});

describe('backups.create with unless_exists', () => {
  it('re-running a nightly job backs up only what is missing, and plan shows the ones skipped', async () => {
    const { sim } = await start({ sites: 10, operationDelayMs: 0, seed: 4 });
    const dir = tempDir();
    const file = writePlaybook(
      'version: 1\nname: nightly\ntasks:\n  - { name: backup, action: backups.create, target: all, with: { tag: "nightly-{{date}}", unless_exists: true } }\n',
      dir,
    );
    // The first night fails for some environments (a creating call is not re-sent after a 503).
    sim.setFaults('503=0.4', { writesOnly: true });
    const first = await runCli(['run', file, '--yes', '--report', join(dir, '1.json')], simEnv(sim));
    expect(first.code).toBe(1);
    const firstReport = JSON.parse(readFileSync(join(dir, '1.json'), 'utf8')) as Report;
    const done = firstReport.summary.accepted;
    expect(done).toBeGreaterThan(0);
    sim.setFaults({});
    const plan = await runCli(['plan', file, '-v'], simEnv(sim));
    expect(plan.code).toBe(0);
    expect(plan.stdout).toMatch(new RegExp(`${done} targets? skipped`));
    const again = await runCli(['run', file, '--yes', '--report', join(dir, '2.json')], simEnv(sim));
    expect(again.code).toBe(0);
    const second = JSON.parse(readFileSync(join(dir, '2.json'), 'utf8')) as Report;
    expect(second.summary.accepted).toBe(sim.fleet.environments.size - done);
    expect(second.results.filter((r) => r.status === 'skipped' && /exists already/.test(r.reason ?? ''))).toHaveLength(done);
    // Exactly one nightly backup per environment in the end.
    const tag = firstReport.results[0]!.request!.body as { tag: string };
    for (const env of sim.fleet.environments.values())
      expect(
        env.backups.filter((b) => b.note === tag.tag),
        env.id,
      ).toHaveLength(1);
  });
});
