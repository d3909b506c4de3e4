import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { Plan } from '../../src/plan/plan.js';
import type { Report } from '../../src/report/report.js';
import type { Simulator } from '../../src/sim/server.js';
import { runCli, simEnv, startCliInProcess, tempDir, writePlaybook } from '../helpers/cli.js';
import { useSimulator, whenAnswered } from '../helpers/sim.js';
import { shapeFleet } from '../helpers/themes.js';

const start = useSimulator();

/** Every environment gets theme calm 1.0.0 (1.0.1 offered) and plugins forms 1.0.0 and cache 2.0.0 (each one release behind). */
function shape(sim: Simulator): void {
  shapeFleet(sim, { calm: { versions: ['1.0.0', '1.0.1'], vulnerable: [] } });
  sim.fleet.pluginCatalog.clear();
  for (const [name, versions] of [
    ['forms', ['1.0.0', '1.1.0']],
    ['cache', ['2.0.0', '2.1.0']],
  ] as const)
    sim.fleet.pluginCatalog.set(name, { name, title: name, versions: [...versions], vulnerable: new Set() });
  for (const env of sim.fleet.environments.values()) {
    env.plugins.clear();
    for (const [name, version] of [
      ['forms', '1.0.0'],
      ['cache', '2.0.0'],
    ] as const)
      env.plugins.set(name, { version, status: 'active', updateStatus: 'none', autoUpdateType: 'none' });
  }
}

const TASKS = (sim: Simulator, together = true) =>
  `version: 1\nname: n\nsettings: { rate_limit: 50/s }\ntasks:\n` +
  `  - name: themes\n    action: themes.update\n    target: { environment: live }\n    backup_first: true\n` +
  `    health: { url: "${sim.siteUrl}", attempts: 2, interval: 50ms, on_broken: restore }\n` +
  `  - name: plugins\n    action: plugins.update\n    target: { environment: live }\n` +
  (together
    ? `    rollout: { together: themes }\n`
    : `    backup_first: true\n    health: { url: "${sim.siteUrl}", attempts: 2, interval: 50ms, on_broken: restore }\n`);

async function night(sim: Simulator, together = true, edit = (yaml: string) => yaml): Promise<{ code: number | null; report: Report; pages: number }> {
  const dir = tempDir();
  const file = writePlaybook(edit(TASKS(sim, together)), dir);
  const reportPath = join(dir, 'r.json');
  const before = sim.siteLog.length;
  // Polled every 20 ms, not after the CLI's 1 s first wait: most of these nights' operations end at once.
  const result = await runCli(['run', file, '--yes', '--poll-interval', '20', '--report', reportPath], simEnv(sim));
  const pages = sim.siteLog.length - before;
  return { code: result.code, report: JSON.parse(readFileSync(reportPath, 'utf8')) as Report, pages };
}

describe('rollout.together: one backup, one look after both, one restore of both', () => {
  it('validate refuses what cannot join: a later or unknown task, the same kind, guards of its own, nothing to share', async () => {
    const base = 'version: 1\nname: v\ncompany: 0f1e2d3c-4b5a-4697-8877-665544332211\ntasks:\n';
    const theme = '  - name: t\n    action: themes.update\n    target: all\n    backup_first: true\n';
    const cases: [string, RegExp][] = [
      [
        `  - name: p\n    action: plugins.update\n    target: all\n    rollout: { together: t }\n${theme}`,
        /tasks\.0\.rollout\.together: names no earlier task: "t"/,
      ],
      [
        `${theme}  - name: u\n    action: themes.update\n    target: all\n    rollout: { together: t }\n`,
        /tasks\.1\.rollout\.together: joins an update of another kind of item/,
      ],
      [
        `${theme}  - name: p\n    action: plugins.update\n    target: all\n    backup_first: true\n    rollout: { together: t }\n`,
        /tasks\.1\.backup_first: this task takes the backup_first of "t"/,
      ],
      [
        `${theme}  - name: p\n    action: plugins.update\n    target: all\n    rollout: { together: t, canary: 1 }\n`,
        /tasks\.1\.rollout\.canary: this task's writes go in the turn of "t"/,
      ],
      [
        `  - name: t\n    action: themes.update\n    target: all\n  - name: p\n    action: plugins.update\n    target: all\n    rollout: { together: t }\n`,
        /tasks\.1\.rollout\.together: "t" takes no backup and looks at no page/,
      ],
    ];
    for (const [tasks, message] of cases) {
      const res = await runCli(['validate', writePlaybook(base + tasks)]);
      expect(res.code, tasks).toBe(2);
      expect(res.stderr).toMatch(new RegExp(`playbook\\.yaml:\\d+:\\d+: ${message.source}`));
    }
    expect(
      (await runCli(['validate', writePlaybook(`${base}${theme}  - name: p\n    action: plugins.update\n    target: all\n    rollout: { together: t }\n`)]))
        .code,
    ).toBe(0);
  });

  it('the plan: where both write, the plugin write waits for the theme task’s backup and goes in its turn; the theme task’s steps are as without it', async () => {
    const { sim } = await start({ sites: 3, seed: 5 });
    shape(sim);
    const plans = await Promise.all(
      [true, false].map(async (together) => {
        const out = join(tempDir(), 'plan.json');
        expect((await runCli(['plan', writePlaybook(TASKS(sim, together)), '--out', out], simEnv(sim))).code).toBe(0);
        return JSON.parse(readFileSync(out, 'utf8')) as Plan;
      }),
    );
    const [joined, apart] = plans as [Plan, Plan];
    const themeSteps = (p: Plan) => JSON.stringify(p.steps.filter((s) => s.task_index === 0));
    expect(themeSteps(joined)).toBe(themeSteps(apart));
    const live = [...sim.fleet.environments.values()].filter((e) => e.displayName === 'live').map((e) => e.id);
    for (const env of live) {
      const plugin = joined.steps.find((s) => s.task_index === 1 && s.target.env_id === env)!;
      expect(plugin).toMatchObject({ joins: 0, backup_step: `0:${env}:backup` });
      expect(joined.steps.some((s) => s.task_index === 1 && s.role === 'backup' && s.target.env_id === env)).toBe(false);
    }
    expect(apart.steps.filter((s) => s.task_index === 1 && s.role === 'backup')).toHaveLength(live.length);
    expect(apart.steps.some((s) => s.joins !== undefined)).toBe(false);
  });

  it('a plugin that breaks the site: one look after both finds it, one restore puts back both, the theme write is undone with it', async () => {
    const { sim } = await start({ sites: 3, seed: 5, operationDelayMs: 0 });
    shape(sim);
    sim.breakPlugin('cache@2.1.0');
    const live = [...sim.fleet.environments.values()].filter((e) => e.displayName === 'live');
    const { code, report } = await night(sim);
    expect(code, JSON.stringify(report.results.map((r) => [r.step_id, r.status, r.reason]))).toBe(1);
    for (const env of live) {
      const [theme, plugin] = [0, 1].map((i) => report.results.find((r) => r.step_id === `${i}:${env.id}`)!);
      expect(plugin).toMatchObject({ status: 'failed', health: { outcome: 'unhealthy' }, restored: { status: 'succeeded' } });
      expect(theme).toMatchObject({
        status: 'failed',
        reason: expect.stringMatching(
          /^undone: the environment was put back from backup \d+, taken before this write, after its site was seen broken once this environment's writes looked at together with it \(rollout.together\) ended/,
        ) as unknown,
      });
      // One backup for both: the plugin step was restored from the theme task's.
      expect(plugin!.restored!.backup_id).toBe(report.results.find((r) => r.step_id === `0:${env.id}:backup`)!.restore_point!.backup_id);
      expect([env.themes.get('calm')!.version, env.plugins.get('cache')!.version, env.plugins.get('forms')!.version]).toEqual(['1.0.0', '2.0.0', '1.0.0']);
    }
    expect(report.results.filter((r) => r.step_id?.endsWith(':backup'))).toHaveLength(live.length);
  });

  it("health.undo: items_first on a group: one write's items are not the group's, so the backup puts both back; no WP-CLI call", async () => {
    const { sim } = await start({ sites: 3, seed: 5, operationDelayMs: 0 });
    shape(sim);
    sim.breakPlugin('cache@2.1.0');
    const live = [...sim.fleet.environments.values()].filter((e) => e.displayName === 'live');
    const { code, report } = await night(sim, true, (yaml) => yaml.replace('on_broken: restore }', 'on_broken: restore, undo: items_first }'));
    expect(code).toBe(1);
    for (const env of live) {
      const plugin = report.results.find((r) => r.step_id === `1:${env.id}`)!;
      expect(plugin).toMatchObject({ status: 'failed', restored: { status: 'succeeded' } });
      expect(plugin.undone).toBeUndefined();
      expect([env.themes.get('calm')!.version, env.plugins.get('cache')!.version]).toEqual(['1.0.0', '2.0.0']);
    }
    expect(sim.log.filter((e) => e.endpoint === 'runWpCliCommand')).toEqual([]);
  });

  it('a site broken before the group: its one look before holds both writes (broken_before), nothing is sent there; the other sites go on', async () => {
    const { sim } = await start({ sites: 3, seed: 5, operationDelayMs: 0, createRate: '100/s' });
    shape(sim);
    const [down, ...up] = [...sim.fleet.environments.values()].filter((e) => e.displayName === 'live');
    sim.breakSite(down!.domains[0]!.name);
    const { code, report } = await night(sim);
    expect(code).toBe(1);
    const [theme, plugin] = [0, 1].map((i) => report.results.find((r) => r.step_id === `${i}:${down!.id}`)!);
    for (const r of [theme, plugin])
      expect(r).toMatchObject({ status: 'held', attempts: 0, held: { code: 'broken_before' }, health: { outcome: 'unhealthy before' } });
    // One look before for the group, none after (nothing was written); no write, no restore there.
    expect(sim.siteLog.filter((e) => e.domain === down!.domains[0]!.name)).toHaveLength(2); // its 2 attempts
    // Its backup was taken first (the look comes once its restore point is there); no write went after it.
    expect(sim.log.filter((e) => e.method !== 'GET' && e.path.includes(down!.id)).map((e) => e.endpoint)).toEqual(['addManualBackup']);
    expect([down!.themes.get('calm')!.version, down!.plugins.get('cache')!.version]).toEqual(['1.0.0', '2.0.0']);
    for (const env of up)
      for (const i of [0, 1])
        expect(report.results.find((r) => r.step_id === `${i}:${env.id}`)).toMatchObject({ status: 'succeeded', health: { outcome: 'healthy' } });
  });

  it('a healthy night: the page is looked at once before and once after both writes, not once around each', async () => {
    const counts = await Promise.all(
      [true, false].map(async (together) => {
        const { sim } = await start({ sites: 3, seed: 5, operationDelayMs: 0, createRate: '100/s' }); // backups counted here, not the creating-call limit
        shape(sim);
        const { code, report, pages } = await night(sim, together);
        expect(code).toBe(0);
        const writes = report.results.filter((r) => r.step_id && !r.step_id.endsWith(':backup') && r.status === 'succeeded');
        expect(writes.every((r) => r.health?.outcome === 'healthy')).toBe(true);
        return { pages, backups: report.results.filter((r) => r.step_id?.endsWith(':backup')).length, live: writes.length / 2 };
      }),
    );
    const [joined, apart] = counts as [(typeof counts)[0], (typeof counts)[0]];
    // Two looks an environment together (before, after), four apart; one backup an environment, not two.
    expect(joined.pages).toBe(2 * joined.live);
    expect(apart.pages).toBe(4 * apart.live);
    expect([joined.backups, apart.backups]).toEqual([joined.live, 2 * apart.live]);
  });
});

/**
 * rollout.together: the theme write and the plugin write of an environment share one look after. A
 * halt (two Ctrl-C) during that look's cache clear held both `not_looked`; resume then found nothing
 * to do for them in the group's turn, and said so night after night.
 */
describe('writes looked at together, halted before their look', () => {
  it('resume takes the group look the halt kept from happening, and both writes end', async () => {
    const { sim } = await start({ sites: 1, seed: 5, operationDelayMs: 50 });
    shape(sim);
    const dir = tempDir();
    const path = join(dir, 'r.json');
    const yaml = TASKS(sim);
    const running = await startCliInProcess(['run', writePlaybook(yaml, dir), '--yes', '--poll-interval', '50', '--report', path], simEnv(sim));
    whenAnswered(sim, 'clearCache', 1, () => {
      running.interrupt();
      running.interrupt();
    });
    expect((await running.done).code).toBe(130);
    const writes = (): Report['results'] =>
      (JSON.parse(readFileSync(path, 'utf8')) as Report).results.filter((r) => r.step_id !== null && r.request?.method !== 'POST');
    expect(writes().filter((r) => r.held?.code === 'not_looked').length).toBeGreaterThan(0);
    const resumed = await runCli(['resume', path, '--yes', '--poll-interval', '50'], simEnv(sim));
    expect(resumed.code, resumed.stdout + resumed.stderr).toBe(0);
    for (const r of writes()) expect(r, JSON.stringify(r)).toMatchObject({ status: 'succeeded' });
    expect(writes().some((r) => r.health?.outcome === 'healthy')).toBe(true);
  }, 90_000);
});
