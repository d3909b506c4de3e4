import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { Report } from '../../src/report/report.js';
import { runCli, simEnv, tempDir, writePlaybook } from '../helpers/cli.js';
import { installedPlugins, offeredPlugins, pluginPlaybook, requestsTo } from '../helpers/plugins.js';
import { useSimulator } from '../helpers/sim.js';

const start = useSimulator();

async function run(env: Record<string, string>, yaml: string, flags: string[] = [], now?: () => number) {
  const dir = tempDir();
  const reportPath = join(dir, 'r.json');
  const result = await runCli(['run', writePlaybook(yaml, dir), '--yes', '--poll-interval', '50', '--report', reportPath, ...flags], env, { now });
  return { ...result, report: JSON.parse(readFileSync(reportPath, 'utf8')) as Report };
}

describe('plugins.update against the simulator, from the CLI', () => {
  it('plans from the company plugin listing and installs every offered update except those whose new version is flagged vulnerable', async () => {
    const { sim } = await start({ sites: 5, pluginsPerEnv: 10, seed: 11 });
    const env = simEnv(sim);
    const offered = offeredPlugins(sim);
    const safe = offered.filter((o) => !o.vulnerableUpdate);
    const unsafe = offered.filter((o) => o.vulnerableUpdate);
    // The seed gives both kinds, so the test can tell "all installed" from "all but the vulnerable".
    expect(safe.length).toBeGreaterThan(5);
    expect(unsafe.length).toBeGreaterThan(0);

    // Planning reads the company listing a page at a time, and no environment's own listing.
    const planned = await runCli(['plan', writePlaybook(pluginPlaybook(''))], env);
    expect(planned.code, planned.stderr).toBe(0);
    expect(planned.stdout.split('\n')[0]).toMatch(/, \d+ themes in the listing, \d+ plugins in the listing$/);
    expect(requestsTo(sim, 'listPlugins').length).toBeGreaterThan(0);
    expect(requestsTo(sim, 'listPlugins').every((e) => e.method === 'GET' && e.path === `/v2/company/${sim.companyId}/wp-plugins`)).toBe(true);
    expect(requestsTo(sim, 'listEnvironmentPlugins')).toEqual([]);

    const versions = installedPlugins(sim);
    const before = sim.log.length;
    const night = await run(env, pluginPlaybook(''));
    expect(night.code, night.stderr).toBe(0);
    // The run reads no environment's listing but to read its writes back: each written environment's once.
    const written = [...new Set(safe.map((o) => o.env))];
    expect(
      requestsTo(sim, 'listEnvironmentPlugins', before)
        .map((e) => e.path)
        .sort(),
    ).toEqual(written.map((id) => `/v2/sites/environments/${id}/wp-plugins`).sort());
    const after = installedPlugins(sim);
    for (const o of safe) expect(after.get(`${o.env} ${o.name}`), `${o.env} ${o.name}`).toBe(o.latest);
    for (const o of unsafe) expect(after.get(`${o.env} ${o.name}`), `${o.env} ${o.name}`).toBe(o.version);
    // Nothing else moved.
    const touched = new Set(safe.map((o) => `${o.env} ${o.name}`));
    for (const [key, version] of after) if (!touched.has(key)) expect(version, key).toBe(versions.get(key));
    expect(
      offeredPlugins(sim)
        .map((o) => `${o.env} ${o.name}`)
        .sort(),
    ).toEqual(unsafe.map((o) => `${o.env} ${o.name}`).sort());

    // One bulk update per environment with a safe update; each kept its operation and ended succeeded.
    const writes = night.report.results.filter((r) => r.request?.method === 'PUT');
    expect(writes.map((r) => r.target.env_id).sort()).toEqual([...new Set(safe.map((o) => o.env))].sort());
    for (const w of writes) {
      expect(w.request!.path).toBe(`/sites/environments/${w.target.env_id}/plugins/bulk-update`);
      expect(w.status).toBe('succeeded');
      expect(w.operation_id).toMatch(/^wp-plugins:bulk-update-/);
    }
    expect(
      requestsTo(sim, 'bulkUpdatePlugins', before)
        .map((e) => e.operation_id)
        .sort(),
    ).toEqual(writes.map((w) => w.operation_id).sort());
    // The vulnerable ones are named in the reasons of their environment.
    for (const o of unsafe) {
      const reasons = night.report.results.filter((r) => r.target.env_id === o.env).map((r) => r.reason ?? '');
      expect(reasons.join(' '), `${o.env} ${o.name}`).toMatch(new RegExp(`left alone: .*${o.name}: `));
    }
  });
});

const T0 = Date.parse('2026-03-02T02:00:00.000Z');
const DAY = 86_400_000;

describe('plugins.update with min_release_age', () => {
  it('a fresh state folder holds every offered plugin update (nothing sent); three days on they go pinned and are read back', async () => {
    const { sim } = await start({ sites: 3, pluginsPerEnv: 6, seed: 11 });
    const env = simEnv(sim);
    const safe = offeredPlugins(sim).filter((o) => !o.vulnerableUpdate);
    expect(safe.length).toBeGreaterThan(2);
    const yaml = pluginPlaybook('    verify: true\n    with: { min_release_age: 3d, release_age_bypass: none }\n');
    const versions = installedPlugins(sim);
    const before = sim.log.length;
    const first = await run(env, yaml, [], () => T0);
    expect(first.code, first.stderr).toBe(0);
    expect(sim.log.slice(before).filter((e) => e.method !== 'GET')).toEqual([]);
    expect(installedPlugins(sim)).toEqual(versions);
    // Each held update is named as a plugin: in the report's records, the summary and the first-seen store.
    const decisions = first.report.results.flatMap((r) => r.release_age ?? []);
    expect(decisions.length).toBe(safe.length);
    for (const o of safe) {
      expect(decisions).toContainEqual(expect.objectContaining({ plugin: o.name, code: 'age_pending', held: true, installed: o.version, version: o.latest }));
    }
    // The summary names each held plugin version once, with the versions it moves from (the first ten, then how many more).
    const distinct = new Set(safe.map((o) => `${o.name} → ${o.latest}`));
    const moves = new Set(safe.map((o) => `${o.name} ${o.version} → ${o.latest}`));
    const lines = first.stdout.split('\n').filter((l) => l.startsWith('release age (plugins): '));
    const named = lines.flatMap((l) => {
      const m = /^release age \(plugins\): (\S+) (\S+(?:, \S+)*) → (\S+), first seen .*: age_pending, held on/.exec(l);
      if (!m) return [];
      for (const from of m[2]!.split(', ')) expect(moves).toContain(`${m[1]} ${from} → ${m[3]}`);
      return [`${m[1]} → ${m[3]}`];
    });
    expect(new Set(named).size).toBe(named.length);
    for (const n of named) expect(distinct).toContain(n);
    const more = Number(/release age \(plugins\): (\d+) more/.exec(first.stdout)?.[1] ?? 0);
    expect(named.length + more).toBe(distinct.size);
    expect(decisions.every((d) => !('theme' in d))).toBe(true);
    const seen = readFileSync(join(env.SITEFLEET_STATE_DIR!, 'first-seen', `${sim.companyId}.jsonl`), 'utf8');
    for (const o of safe) expect(seen).toContain(JSON.stringify({ v: 1, plugin: o.name, version: o.latest, first_seen: new Date(T0).toISOString() }));

    // Three days on: each aged update goes pinned to the version judged, and the report records what runs.
    const later = sim.log.length;
    const second = await run(env, yaml, [], () => T0 + 3 * DAY);
    expect(second.code, second.stderr).toBe(0);
    const sent = requestsTo(sim, 'updatePlugin', later);
    expect(sent.map((e) => `${e.path.split('/')[4]} ${JSON.stringify(e.body)}`).sort()).toEqual(
      safe.map((o) => `${o.env} ${JSON.stringify({ name: o.name, update_version: o.latest })}`).sort(),
    );
    expect(requestsTo(sim, 'bulkUpdatePlugins', later)).toEqual([]);
    const writes = second.report.results.filter((r) => r.request?.method === 'PUT');
    expect(writes).toHaveLength(safe.length);
    for (const w of writes) {
      const body = w.request!.body as { name: string; update_version: string };
      expect(w).toMatchObject({ status: 'succeeded', operation_id: expect.stringMatching(/^wp-plugin:update-/) as unknown });
      expect(w.runs).toEqual([{ name: body.name, version: body.update_version }]);
    }
    for (const o of safe) expect(installedPlugins(sim).get(`${o.env} ${o.name}`)).toBe(o.latest);
  });
});
