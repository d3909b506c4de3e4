import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { Report } from '../../src/report/report.js';
import type { Simulator } from '../../src/sim/server.js';
import { runCli, simEnv, tempDir, writePlaybook } from '../helpers/cli.js';
import { busiestPlugin, offeredPlugins, requestsTo } from '../helpers/plugins.js';
import { useSimulator } from '../helpers/sim.js';

const start = useSimulator();

/** A pinned plugin night (max_bump: every write names its version, the endpoint takes one plugin) on every live environment, guarded. */
function pinnedNight(sim: Simulator, health: string): string {
  return `version: 1
name: pinned night
settings: { rate_limit: 50/s }
tasks:
  - name: plugins
    action: plugins.update
    target: { environment: live }
    with: { max_bump: major }
    backup_first: true
    max_failures: 100
    health: { url: "${sim.siteUrl}", attempts: 1, interval: 50ms${health} }
`;
}

async function run(sim: Simulator, yaml: string, command = 'run') {
  const dir = tempDir();
  const reportPath = join(dir, 'r.json');
  const flags = command === 'run' ? ['--yes', '--poll-interval', '50', '--report', reportPath] : [];
  const result = await runCli([command, writePlaybook(yaml, dir), ...flags], simEnv(sim));
  const report = command === 'run' ? (JSON.parse(readFileSync(reportPath, 'utf8')) as Report) : undefined;
  return { ...result, out: result.stdout + result.stderr, report };
}

/** Live environments with more than one safe plugin update offered, and how many each. */
function liveOffers(sim: Simulator): Map<string, number> {
  const live = new Set([...sim.fleet.environments.values()].filter((e) => e.displayName === 'live').map((e) => e.id));
  const per = new Map<string, number>();
  for (const o of offeredPlugins(sim)) if (live.has(o.env) && !o.vulnerableUpdate) per.set(o.env, (per.get(o.env) ?? 0) + 1);
  return per;
}

/** Page looks per environment's domain, in the simulator's site log. */
function looksAt(sim: Simulator, envId: string): number {
  const domain = sim.fleet.environments.get(envId)!.domains[0]!.name;
  return sim.siteLog.filter((v) => v.domain === domain).length;
}

/**
 * Three sites whose busiest plugin's newest version breaks every site it goes to; the live environments' offers.
 * Caches cleared without the vendor's gap: a put-back's clear right after the write's waited out a 429 of a second.
 */
async function breakingPluginFleet() {
  const { sim } = await start({ sites: 3, pluginsPerEnv: 8, seed: 5, operationDelayMs: 20, clearCacheGapMs: 0 });
  const { plugin, envs } = busiestPlugin(sim);
  const latest = sim.fleet.pluginCatalog.get(plugin)!.versions.at(-1)!;
  sim.breakPlugin(`${plugin}@${latest}`);
  return { sim, plugin, envs, latest, offers: liveOffers(sim) };
}

describe('one guard per environment: pinned writes of a task share one look (issue 56, item 1)', () => {
  it('a pinned night of several plugins an environment: one restore point, one look before, one clear and one look after each', async () => {
    const { sim } = await start({ sites: 4, pluginsPerEnv: 8, seed: 11, operationDelayMs: 20 });
    const offers = liveOffers(sim);
    const written = [...offers.keys()];
    // The seed gives environments with several updates: what a guard per write would multiply.
    expect(Math.max(...offers.values())).toBeGreaterThan(2);
    const planned = await run(sim, pinnedNight(sim, ''), 'plan');
    const writes = [...offers.values()].reduce((a, b) => a + b, 0);
    expect(planned.stdout).toContain(`and ${written.length} times after ${writes} guarded writes (one guard an environment`);
    const night = await run(sim, pinnedNight(sim, ''));
    expect(night.code, night.out).toBe(0);
    const statuses = night.report!.results.filter((r) => r.role !== 'backup').map((r) => r.status);
    expect(statuses).toHaveLength(writes);
    expect(new Set(statuses)).toEqual(new Set(['succeeded']));
    expect(offeredPlugins(sim).filter((o) => offers.has(o.env) && !o.vulnerableUpdate)).toEqual([]);
    const perEnv = (endpoint: string) => written.map((id) => requestsTo(sim, endpoint).filter((e) => e.path.split('/')[4] === id).length);
    expect(perEnv('addManualBackup')).toEqual(written.map(() => 1));
    expect(perEnv('updatePlugin')).toEqual(written.map((id) => offers.get(id)));
    expect(requestsTo(sim, 'clearCache')).toHaveLength(written.length);
    // A look is one page (attempts: 1): one before the first write, one after the last.
    expect(written.map((id) => looksAt(sim, id))).toEqual(written.map(() => 2));
  });

  it('a plugin of the group breaks the site: put back by the items’ files once for all of them, isolated over the group by files; no backup restored', async () => {
    const { sim, plugin, envs, latest, offers } = await breakingPluginFleet();
    const offered = offeredPlugins(sim).filter((o) => !o.vulnerableUpdate);
    const broken = envs.filter((id) => (offers.get(id) ?? 0) > 1);
    expect(broken.length).toBeGreaterThan(0);
    const night = await run(sim, pinnedNight(sim, ', on_broken: isolate, undo: items_first'));
    expect(night.code, night.out).toBe(1);
    expect(requestsTo(sim, 'restoreBackup')).toEqual([]);
    for (const id of broken) {
      const env = sim.fleet.environments.get(id)!;
      const steps = night.report!.results.filter((r) => r.target?.env_id === id && r.role !== 'backup');
      expect(steps.length).toBe(offers.get(id));
      // One put-back for the group, and one isolation over all its items, carried by the write whose look it was.
      const holders = steps.filter((r) => r.undone);
      expect(holders).toHaveLength(1);
      expect(holders[0]!.undone).toMatchObject({ status: 'succeeded', health: { outcome: 'healthy' } });
      expect(holders[0]!.undone!.commands).toHaveLength(offers.get(id)!);
      expect(holders[0]!.isolation).toMatchObject({ outcome: 'found', culprits: [{ plugin, to: latest }], restores: 0 });
      expect(holders[0]!.isolation!.updates).toHaveLength(offers.get(id)!);
      // Each write says what became of its own item: the culprit's failed, every other one in.
      for (const r of steps) {
        const name = (r.request!.body as { name: string }).name;
        if (name === plugin) expect(r.status, JSON.stringify(r).slice(0, 600)).toBe('failed');
        else expect(r.status, JSON.stringify(r).slice(0, 600)).toBe('succeeded');
      }
      const old = offered.find((o) => o.env === id && o.name === plugin)!.version;
      expect(env.plugins.get(plugin)!.version).toBe(old);
      for (const o of offered.filter((o) => o.env === id && o.name !== plugin)) expect(env.plugins.get(o.name)!.version, o.name).not.toBe(o.version);
    }
  });
});

/**
 * The breaking night on a fleet, run to its end, then its journal cut after the first record of the
 * environment `at` picks: what a kill at that moment leaves. `othersDone`: the other environments'
 * later records kept (their nights had ended when this one's was cut), so that nothing but this
 * environment's records is missing. Then the resume, and its report's steps there.
 */
async function killedAt(at: (line: string, env: string) => boolean, { othersDone = false } = {}) {
  const fleet = await breakingPluginFleet();
  const { sim, envs, offers } = fleet;
  const id = envs.find((e) => (offers.get(e) ?? 0) > 1)!;
  const dir = tempDir();
  const reportPath = join(dir, 'r.json');
  const env = simEnv(sim);
  const file = writePlaybook(pinnedNight(sim, ', on_broken: isolate, undo: items_first'), dir);
  await runCli(['run', file, '--yes', '--poll-interval', '50', '--report', reportPath], env);
  const journal = reportPath.replace(/\.json$/, '.journal.jsonl');
  const lines = readFileSync(journal, 'utf8').split('\n').filter(Boolean);
  const cut = lines.findIndex((l) => at(l, id));
  expect(cut).toBeGreaterThan(0);
  writeFileSync(
    journal,
    lines
      .filter((l, i) => i <= cut || (othersDone && !l.includes(id)))
      .map((l) => `${l}\n`)
      .join(''),
  );
  const resume = async () => {
    const resumed = await runCli(['resume', reportPath, '--yes', '--poll-interval', '50'], env);
    const report = JSON.parse(readFileSync(reportPath, 'utf8')) as Report;
    return { resumed, steps: report.results.filter((r) => r.target?.env_id === id && r.role !== 'backup') };
  };
  return { ...fleet, id, resume };
}

describe('one guard per environment, resumed', () => {
  it('killed while the group’s items were being put back: resume finishes the put-back and isolates over every item of the group', async () => {
    // What a kill while the put-back's first command was on the wire leaves: the journal up to that record.
    const { sim, plugin, offers, id, resume } = await killedAt(
      (l, id) => l.includes(id) && l.includes('"undone":{"status":"sending"') && l.includes('"status":"sending","operation_id":null'),
    );
    const offered = offeredPlugins(sim).filter((o) => !o.vulnerableUpdate && o.env === id);
    // The site as the kill left it: every item of the group on its new version, broken.
    const site = sim.fleet.environments.get(id)!;
    for (const o of offered) site.plugins.get(o.name)!.version = o.latest;
    const { resumed, steps } = await resume();
    const holder = steps.find((r) => r.undone)!;
    expect(holder.isolation, resumed.stdout + resumed.stderr).toMatchObject({ outcome: 'found', culprits: [{ plugin }] });
    expect(holder.isolation!.updates).toHaveLength(offers.get(id)!);
    for (const r of steps) {
      const name = (r.request!.body as { name: string }).name;
      expect(r.status, `${name}: ${r.reason}`).toBe(name === plugin ? 'failed' : 'succeeded');
    }
    expect(requestsTo(sim, 'restoreBackup')).toEqual([]);
  });

  it('killed once the group’s isolation ended, before its writes said what became of their items: resume says it, and sends nothing', async () => {
    // What a kill just after isolation's end was journaled leaves: the journal up to that record.
    const { sim, plugin, id, resume } = await killedAt((l, id) => l.includes(id) && l.includes('"isolation":{') && l.includes('"outcome":"found"'));
    const sent = sim.log.length;
    const { resumed, steps } = await resume();
    for (const r of steps) {
      const name = (r.request!.body as { name: string }).name;
      expect(r.status, `${name}: ${r.reason} ${resumed.stdout}`).toBe(name === plugin ? 'failed' : 'succeeded');
    }
    // Nothing to this environment: its isolation had ended. (The cut journal lost other environments'
    // records after this one, however far their nights had gone: what resume sends them again is theirs.)
    expect(sim.log.slice(sent).filter((e) => e.path.includes(id) && e.method !== 'GET' && e.endpoint !== 'clearCache')).toEqual([]);
  });

  it('killed there with every other step of the night ended: resume still says what became of its writes, and sends nothing', async () => {
    const isolationEnded = (l: string, id: string) => l.includes(id) && l.includes('"isolation":{') && l.includes('"outcome":"found"');
    const { sim, plugin, resume } = await killedAt(isolationEnded, { othersDone: true });
    const sent = sim.log.length;
    // No fleet read, no playbook, no Chromium or window needed: what is said comes from the journal alone.
    const { resumed, steps } = await resume();
    expect(resumed.stdout).toMatch(/1 guard group whose isolation ended before their writes said what became of their items: said now/);
    expect(resumed.stdout).toMatch(/nothing left to send: every step has ended/);
    expect(resumed.code).toBe(1); // its culprit failed
    for (const r of steps) {
      const name = (r.request!.body as { name: string }).name;
      expect(r.status, `${name}: ${r.reason} ${resumed.stdout}`).toBe(name === plugin ? 'failed' : 'succeeded');
    }
    expect(sim.log.slice(sent)).toEqual([]);
    // Said once, journaled: a second resume has nothing to say, and reports the same.
    const again = await resume();
    expect(again.resumed.stdout).not.toMatch(/guard group/);
    expect(again.steps.map((r) => r.status)).toEqual(steps.map((r) => r.status));
  });
});
