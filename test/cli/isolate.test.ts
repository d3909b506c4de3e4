import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { Report } from '../../src/report/report.js';
import { restoreBound } from '../../src/run/life/isolation.js';
import type { Simulator } from '../../src/sim/server.js';
import { runCli, simEnv, startCli, startCliInProcess, tempDir, writePlaybook } from '../helpers/cli.js';
import { busiestPlugin, offeredPlugins, requestsTo, roundAfterRestore } from '../helpers/plugins.js';
import { useSimulator } from '../helpers/sim.js';
import { whenSeen } from '../helpers/sim-events.js';
import { fourPlugins, isolatedWrite, isolatingNight } from '../helpers/isolate.js';
import { shapeFleet, withoutPlugins } from '../helpers/themes.js';

const start = useSimulator();

/** Isolation's chain of operations on a site, polled every 20 ms; the sites' cache clears without the vendor's gap (not what is tested here). */
async function run(sim: Simulator, yaml: string, env = simEnv(sim)) {
  const dir = tempDir();
  const reportPath = join(dir, 'r.json');
  const result = await runCli(['run', writePlaybook(yaml, dir), '--yes', '--poll-interval', '20', '--report', reportPath], env);
  return { ...result, out: result.stdout + result.stderr, report: JSON.parse(readFileSync(reportPath, 'utf8')) as Report };
}

describe('health.on_broken: isolate, a plugin whose new version breaks every site where it is active', () => {
  it('on each broken site: the culprit back on its old version, every other update in, the site healthy, within 1 + ⌈log2 n⌉ restores', async () => {
    const { sim } = await start({
      sites: 6,
      pluginsPerEnv: 12,
      seed: 5,
      operationDelayMs: 20,
      clearCacheGapMs: 0,
      createRate: '100/s',
      operationVisibleAfterMs: 0,
    }); // two nights of operations in series on a site: neither the creating-call limit nor new operations' 2 s of 404 (the real profile's) is what is tested
    const { plugin, envs } = busiestPlugin(sim);
    const offered = offeredPlugins(sim).filter((o) => !o.vulnerableUpdate);
    const latest = sim.fleet.pluginCatalog.get(plugin)!.versions.at(-1)!;
    sim.breakPlugin(`${plugin}@${latest}`);
    const env = simEnv(sim); // one state folder for both nights
    const { code, out, report } = await run(sim, isolatingNight(sim), env);
    expect(code, out).toBe(1);
    for (const id of envs) {
      const site = sim.fleet.environments.get(id)!;
      const write = report.results.find((r) => r.target.env_id === id && r.request?.method === 'PUT')!;
      const n = offered.filter((o) => o.env === id).length;
      const old = offered.find((o) => o.env === id && o.name === plugin)!.version;
      expect(write, `${id}: ${JSON.stringify(write, null, 1).slice(0, 3000)}`).toMatchObject({
        status: 'failed',
        isolation: { outcome: 'found', culprits: [{ plugin, from: old, to: latest }] },
      });
      expect(write.isolation!.restores).toBeLessThanOrEqual(restoreBound(n));
      // The site's own words named the culprit: tried alone first, it costs one restore beyond the write's.
      expect(write.logged, id).toMatchObject({ plugin, line: expect.stringContaining(`wp-content/plugins/${plugin}/`) as unknown });
      expect(write.isolation).toMatchObject({ suspect: { plugin }, restores: 2 });
      expect(write.isolation!.rounds.map((r) => [r.names.length, r.status])).toEqual([
        [1, 'broken'],
        [n - 1, 'healthy'],
      ]);
      expect(requestsTo(sim, 'restoreBackup').filter((e) => e.path.split('/')[4] === id).length).toBe(write.isolation!.restores);
      // The culprit runs its old version; every other update offered here is in.
      expect(site.plugins.get(plugin)!.version).toBe(old);
      for (const o of offered.filter((o) => o.env === id && o.name !== plugin)) expect(site.plugins.get(o.name)!.version, `${id} ${o.name}`).toBe(o.latest);
      expect(write.reason).toContain(`isolated: ${plugin} ${old} → ${latest} broke the site`);
      const page = await fetch(sim.siteUrl.replace('{{domain}}', site.domains[0]!.name));
      expect(page.status, id).toBe(200);
    }
    // The summary says what the next nights will not send, and how to send it again.
    expect(out).toContain(
      `quarantined, sent by no later run of the company until released (sitefleet quarantine list): ${plugin}@${latest}; to send one again: sitefleet quarantine release ${plugin}@${latest} --kind plugin`,
    );
    // The next night: that version goes nowhere, on every site, and the report says why.
    const before = sim.log.length;
    const listed = await runCli(['quarantine', 'list'], env);
    expect(listed.stdout, listed.stderr).toContain(`plugin ${plugin}@${latest}: broke `);
    const next = await run(sim, isolatingNight(sim), env);
    // A site that already ran the broken version (no update of it offered there) answers broken before either night's
    // write: it gets none (held broken_before), and the night says so (exit 1); every other write goes.
    const heldNext = next.report.results.filter((r) => r.status === 'held');
    expect(next.code, next.out).toBe(heldNext.length > 0 ? 1 : 0);
    for (const r of heldNext) {
      expect(r).toMatchObject({ attempts: 0, held: { code: 'broken_before' } });
      expect(envs).not.toContain(r.target.env_id);
      expect(sim.fleet.environments.get(r.target.env_id!)!.plugins.get(plugin)!.version).toBe(latest);
    }
    expect(next.report.results.filter((r) => r.status === 'failed' || r.status === 'unknown')).toEqual([]);
    const sent = requestsTo(sim, 'bulkUpdatePlugins', before).flatMap((e) => (e.body as { plugins: { name: string }[] }).plugins.map((p) => p.name));
    expect(sent).not.toContain(plugin);
    expect(requestsTo(sim, 'restoreBackup', before)).toEqual([]);
    const held = next.report.results.filter((r) => r.withheld?.some((w) => w.code === 'quarantined'));
    expect(held.map((r) => r.target.env_id).sort()).toEqual([...envs].sort());
    expect(next.out).toContain(`sitefleet quarantine release ${plugin}@${latest} --kind plugin`);
  });
});

const restoresOf = (sim: Simulator, envId: string) => requestsTo(sim, 'restoreBackup').filter((e) => e.path.split('/')[4] === envId);

/** The four-plugin night, run by the built CLI in a process of its own (a signal is what it is about). */
async function nightInAProcess() {
  const { sim, live, names, args } = await fourPluginNight();
  return { sim, live, names, path: args.at(-1)!, running: startCli(args, simEnv(sim), { timeoutMs: 60_000 }) };
}

/** The four-plugin night, begun: its simulator, environment and the run's arguments (the report path last). */
async function fourPluginNight() {
  // The stops come as the simulator answers a round's write: its operation under way however short operations are.
  const { sim } = await start({ sites: 1, seed: 5, operationDelayMs: 30, clearCacheGapMs: 0, pageCacheTtlMs: 0 });
  const { live, names } = fourPlugins(sim);
  const dir = tempDir();
  const args = ['run', writePlaybook(isolatingNight(sim), dir), '--yes', '--poll-interval', '20', '--report', join(dir, 'r.json')];
  return { sim, live, names, args };
}

describe('isolation cut off', () => {
  it('killed (SIGKILL) with a round on the wire after another ended with its restore: resume finishes it, never restoring an ended round again', async () => {
    const { sim, live, names, path, running } = await nightInAProcess();
    // The event: a round went out after the site had been put back twice (the write's own restore and a round's).
    whenSeen(
      sim,
      () => restoresOf(sim, live.id).length === 2 && roundAfterRestore(sim, live.id, 2),
      () => running.child.kill('SIGKILL'),
    );
    expect((await running.done).signal).toBe('SIGKILL');
    const before = restoresOf(sim, live.id).length;

    const resumed = await runCli(['resume', path, '--yes', '--poll-interval', '20'], simEnv(sim));
    const write = isolatedWrite(path, live.id);
    expect(resumed.code, resumed.stdout + resumed.stderr).toBe(1);
    expect(write.isolation, JSON.stringify(write.isolation)).toMatchObject({ outcome: 'found', culprits: [{ plugin: 'p0', from: '1.0.0', to: '1.1.0' }] });
    // Every restore the site got is one the record counts: none of an ended round was sent again.
    expect(restoresOf(sim, live.id).length).toBe(write.isolation!.restores);
    expect(write.isolation!.restores).toBeGreaterThanOrEqual(before);
    expect(write.isolation!.restores).toBeLessThanOrEqual(restoreBound(names.length));
    expect(Object.fromEntries(names.map((n) => [n, live.plugins.get(n)!.version]))).toEqual({ p0: '1.0.0', p1: '1.1.0', p2: '1.1.0', p3: '1.1.0' });
  });

  it('Ctrl-C twice during isolation: the round under way stops where it stands, the record says isolating, and resume goes on to the culprit', async () => {
    const { sim, live, names, args } = await fourPluginNight();
    const path = args.at(-1)!;
    const running = await startCliInProcess(args, simEnv(sim));
    // After the write's own restore, as the first round goes out. The first Ctrl-C lets isolation finish; the second halts it.
    const seen = whenSeen(
      sim,
      () => restoresOf(sim, live.id).length === 1 && roundAfterRestore(sim, live.id, 1),
      () => {
        running.interrupt();
        running.interrupt();
      },
    );
    const stopped = await running.done;
    expect(seen()).toBe(true);
    expect(stopped.code, stopped.stdout + stopped.stderr).toBe(130);
    const first = isolatedWrite(path, live.id);
    expect(first.isolation?.outcome, JSON.stringify(first.isolation)).toBe('isolating');
    expect(first.reason).toContain('sitefleet resume');

    const resumed = await runCli(['resume', path, '--yes', '--poll-interval', '20'], simEnv(sim));
    const write = isolatedWrite(path, live.id);
    expect(resumed.code, resumed.stdout + resumed.stderr).toBe(1);
    expect(write.isolation).toMatchObject({ outcome: 'found', culprits: [{ plugin: 'p0' }] });
    expect(restoresOf(sim, live.id).length).toBe(write.isolation!.restores);
    expect(Object.fromEntries(names.map((n) => [n, live.plugins.get(n)!.version]))).toEqual({ p0: '1.0.0', p1: '1.1.0', p2: '1.1.0', p3: '1.1.0' });
  });
});

describe('a culprit found at the canary', () => {
  it('is sent nowhere else in the run: the later waves update everything else, and break nothing', async () => {
    const { sim } = await start({
      sites: 4,
      seed: 5,
      operationDelayMs: 20,
      clearCacheGapMs: 0,
      pageCacheTtlMs: 0,
      createRate: '100/s',
      operationVisibleAfterMs: 0,
    }); // a canary's chain of operations in series: neither the creating-call limit nor new operations' 2 s of 404 (the real profile's) is what is tested
    const { lives, names } = fourPlugins(sim, 'all');
    const yaml = isolatingNight(sim, "    rollout: { canary: 1, waves: ['100%'] }\n");
    const { code, out, report } = await run(sim, yaml);
    expect(code, out).toBe(1);
    const writes = report.results.filter((r) => r.request?.method === 'PUT');
    const canary = writes.find((w) => w.wave === 0)!;
    expect(canary.isolation).toMatchObject({ outcome: 'found', culprits: [{ plugin: 'p0' }] });
    const later = writes.filter((w) => w.wave !== 0);
    expect(later).toHaveLength(lives.length - 1);
    for (const w of later) {
      expect(w, JSON.stringify(w)).toMatchObject({ status: 'succeeded', health: { outcome: 'healthy' } });
      expect(w.reason).toContain(`left out, quarantined in this run: p0 1.1.0 (it broke ${canary.target.site} live)`);
    }
    // What the service got: p0 only in the canary's write and its rounds, restores only there.
    const sent = requestsTo(sim, 'bulkUpdatePlugins');
    for (const e of sent.filter((e) => e.path.split('/')[4] !== canary.target.env_id))
      expect((e.body as { plugins: { name: string }[] }).plugins.map((p) => p.name)).toEqual(['p1', 'p2', 'p3']);
    expect(new Set(requestsTo(sim, 'restoreBackup').map((e) => e.path.split('/')[4]))).toEqual(new Set([canary.target.env_id]));
    for (const env of lives)
      expect(Object.fromEntries(names.map((n) => [n, env.plugins.get(n)!.version]))).toEqual({ p0: '1.0.0', p1: '1.1.0', p2: '1.1.0', p3: '1.1.0' });
  });
});

describe('validate: health.on_broken: isolate', () => {
  it.each([
    ['themes.update', 'health: { on_broken: isolate }', /isolate needs backup_first: true/],
    [
      'php.set_version',
      "with: { php_version: '8.3' }\n    backup_first: true\n    health: { on_broken: isolate }",
      /isolate finds which update of a write broke its site: it takes an item update \(themes\.update, plugins\.update, core\.update\), not php\.set_version/,
    ],
  ])('%s with %s: exit 2, one line naming the field, nothing sent', async (action, guards, message) => {
    const { sim } = await start({ sites: 2 });
    const file = writePlaybook(`version: 1\nname: p\ntasks:\n  - name: t\n    action: ${action}\n    target: all\n    ${guards}\n`);
    const res = await runCli(['validate', file], simEnv(sim));
    expect(res.code, res.stderr).toBe(2);
    expect(res.stderr).toMatch(/tasks\[0\]\.health\.on_broken|tasks\.0\.health\.on_broken/);
    expect(res.stderr).toMatch(message);
    expect(sim.log.filter((e) => e.method !== 'GET')).toEqual([]);
  });
});

describe('isolate on a theme night', () => {
  it('the theme that breaks the site is found and put back; the other themes stay updated', async () => {
    const { sim } = await start({ sites: 2, seed: 5, operationDelayMs: 20, clearCacheGapMs: 0, pageCacheTtlMs: 0, createRate: '100/s' }); // backups and the rounds' own counted here, not the creating-call limit
    withoutPlugins(sim);
    shapeFleet(sim, {
      calm: { versions: ['1.0.0', '1.1.0'], vulnerable: [] },
      bold: { versions: ['2.0.0', '2.1.0'], vulnerable: [] },
      neat: { versions: ['3.0.0', '3.0.1'], vulnerable: [] },
    });
    sim.breakTheme('bold@2.1.0');
    const yaml = isolatingNight(sim).replace('action: plugins.update', 'action: themes.update').replace('plugin updates', 'theme updates');
    const { code, out, report } = await run(sim, yaml);
    expect(code, out).toBe(1);
    const lives = [...sim.fleet.environments.values()].filter((e) => e.displayName === 'live');
    for (const env of lives) {
      const write = report.results.find((r) => r.target.env_id === env.id && r.request?.method === 'PUT')!;
      expect(write.isolation, JSON.stringify(write)).toMatchObject({ outcome: 'found', culprits: [{ theme: 'bold', from: '2.0.0', to: '2.1.0' }] });
      expect(Object.fromEntries([...env.themes].map(([n, t]) => [n, t.version]))).toEqual({ calm: '1.1.0', bold: '2.0.0', neat: '3.0.1' });
    }
  });
});
