import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { readJournal } from '../../src/run/journal.js';
import type { Report, ReportResult } from '../../src/report/report.js';
import { HANDLERS } from '../../src/sim/handlers.js';
import type { Simulator } from '../../src/sim/server.js';
import { runCli, simEnv, tempDir, writePlaybook } from '../helpers/cli.js';
import { busiestPlugin, installedPlugins, pluginPlaybook, requestsTo } from '../helpers/plugins.js';
import { useSimulator } from '../helpers/sim.js';
import { shapeFleet } from '../helpers/themes.js';

const start = useSimulator();
afterEach(() => vi.restoreAllMocks());

const PREMIUM = 'the service ran the update, the site did not move; a premium plugin needs its licence on the site';

async function night(env: Record<string, string>, yaml: string) {
  const dir = tempDir();
  const reportPath = join(dir, 'r.json');
  const result = await runCli(['run', writePlaybook(yaml, dir), '--yes', '--poll-interval', '50', '--report', reportPath], env);
  return { ...result, reportPath, report: JSON.parse(readFileSync(reportPath, 'utf8')) as Report };
}

const writesOf = (report: Report) => report.results.filter((r) => r.request !== null && r.step_id !== null);
const names = (r: ReportResult) => ((r.request!.body as { plugins?: { name: string }[] }).plugins ?? []).map((p) => p.name);

/** A failed night (exit 1) of more than one write, each failed as `expected` says. */
function everyWriteFailed(code: number | null, report: Report, expected: Record<string, unknown>): void {
  expect(code).toBe(1);
  const writes = writesOf(report);
  expect(writes.length).toBeGreaterThan(1);
  for (const w of writes) expect(w).toMatchObject({ status: 'failed', ...expected });
}

/** A fleet whose busiest plugin's licence is not on the sites: its update "succeeds" and its version stays. */
async function unlicensedFleet(sites = 4) {
  const { sim } = await start({ sites, pluginsPerEnv: 10, seed: 7, operationDelayMs: 20 });
  const { plugin, envs } = busiestPlugin(sim);
  sim.unlicensePlugin(plugin);
  return { sim, plugin, envs, env: simEnv(sim) };
}

describe('every item write is read back: an update the site did not take is never a success', () => {
  it('a bulk night over every plugin: each write carrying the unlicensed plugin fails not_updated naming it alone, the others succeed; exit 1', async () => {
    const { sim, plugin, env } = await unlicensedFleet();
    const before = installedPlugins(sim);
    const from = sim.log.length;
    const { code, stdout, report } = await night(env, pluginPlaybook(''));
    expect(code, stdout).toBe(1);
    const writes = writesOf(report);
    const carrying = writes.filter((w) => names(w).includes(plugin));
    expect(carrying.length).toBeGreaterThan(1);
    for (const w of carrying) {
      const was = before.get(`${w.target.env_id} ${plugin}`)!;
      expect(w).toMatchObject({
        status: 'failed',
        reason: `${plugin} stays on ${was}: ${PREMIUM}`,
        failure: { code: 'not_updated', stays: [{ name: plugin, version: was }] },
      });
      expect(w.runs).toContainEqual({ name: plugin, version: was });
    }
    // The others moved and say so; no step that carried the plugin says it was done.
    const others = writes.filter((w) => !names(w).includes(plugin));
    expect(others.length).toBeGreaterThan(0);
    for (const w of others) expect(w.status).toBe('succeeded');
    expect(report.summary.failed).toBe(carrying.length);
    expect(stdout).toContain(`${plugin} stays on`);
    // One read of each written environment's own listing, and no more.
    const reads = requestsTo(sim, 'listEnvironmentPlugins', from);
    expect(reads.map((r) => r.path).sort()).toEqual(writes.map((w) => `/v2/sites/environments/${w.target.env_id}/wp-plugins`).sort());
    // retry_later holds the plugin that stayed, and only it: the others moved.
    const retries = JSON.parse((await runCli(['retry', 'list', '--format', 'json'], env)).stdout) as { name: string; env_id: string }[];
    expect(retries.map((r) => `${r.env_id} ${r.name}`).sort()).toEqual(carrying.map((w) => `${w.target.env_id} ${plugin}`).sort());
    const next = await runCli(['plan', writePlaybook(pluginPlaybook(''))], env);
    expect(next.stdout).toContain(`retry_later (plugins), sitefleet retry clear ${plugin}@`);
    expect(next.stdout).toContain(`${plugin} stays on`);
  });

  it('canary with max_failures: 0: the canary that did not move stops the rollout, nothing more is sent (exit 3)', async () => {
    const { sim, plugin, envs, env } = await unlicensedFleet(6);
    expect(envs.length).toBeGreaterThan(2);
    const task = `    with: { plugins: ${plugin} }\n    max_failures: 0\n    rollout: { canary: 1, waves: ["100%"] }\n`;
    const { code, stdout, report } = await night(env, pluginPlaybook(task).replace('target: all', 'target: { environment: live }'));
    expect(code, stdout).toBe(3);
    const writes = writesOf(report);
    expect(writes.filter((w) => w.status === 'failed').map((w) => w.failure?.code)).toEqual(['not_updated']);
    expect(writes.filter((w) => w.status === 'skipped')).toHaveLength(writes.length - 1);
    expect(writes.some((w) => w.status === 'succeeded')).toBe(false);
    expect(requestsTo(sim, 'bulkUpdatePlugins')).toHaveLength(1);
  });

  it('a pinned update (max_bump) that did not move fails not_updated, not as a version other than judged', async () => {
    const { plugin, env } = await unlicensedFleet();
    const { code, report } = await night(env, pluginPlaybook(`    with: { plugins: ${plugin}, max_bump: major }\n`));
    everyWriteFailed(code, report, {
      failure: { code: 'not_updated' },
      reason: expect.stringMatching(new RegExp(`^${plugin} stays on [\\d.]+: ${PREMIUM}$`)) as unknown,
    });
  });

  it('status --wait ends a write the run did not wait for by the same read back: the unlicensed plugin fails not_updated, journaled too', async () => {
    const { sim, plugin, env } = await unlicensedFleet();
    const before = installedPlugins(sim);
    const { code, report, reportPath } = await night(env, pluginPlaybook('', '{ rate_limit: 50/s, wait: false }'));
    expect(code).toBe(0);
    const carrying = writesOf(report).filter((w) => names(w).includes(plugin));
    expect(carrying.length).toBeGreaterThan(1);
    for (const w of carrying) expect(w.status).toBe('accepted');
    const from = sim.log.length;
    const status = await runCli(['status', reportPath, '--wait', '30s'], env);
    expect(status.code, status.stdout + status.stderr).toBe(1);
    const after = JSON.parse(readFileSync(reportPath, 'utf8')) as Report;
    const ended = writesOf(after);
    for (const w of ended.filter((x) => names(x).includes(plugin))) {
      expect(w).toMatchObject({
        status: 'failed',
        reason: `${plugin} stays on ${before.get(`${w.target.env_id} ${plugin}`)!}: ${PREMIUM}`,
        failure: { code: 'not_updated' },
      });
      expect(readJournal(reportPath.replace(/\.json$/, '.journal.jsonl')).results.get(w.step_id!)?.status).toBe('failed');
    }
    for (const w of ended.filter((x) => !names(x).includes(plugin))) expect(w).toMatchObject({ status: 'succeeded', runs: expect.any(Array) as unknown });
    // One read of each written environment's own listing, as the run makes.
    const reads = requestsTo(sim, 'listEnvironmentPlugins', from);
    expect(reads.map((r) => r.path).sort()).toEqual(ended.map((w) => `/v2/sites/environments/${w.target.env_id}/wp-plugins`).sort());
  });

  it('a theme bulk update whose operation succeeded and moved nothing fails not_updated, read from the company listing', async () => {
    const { sim } = await start({ sites: 3, seed: 5 });
    shapeFleet(sim, { calm: { versions: ['1.0.0', '1.0.1'], vulnerable: [] } });
    stillThemes(sim);
    const yaml = `version: 1\nname: t\nsettings: { rate_limit: 50/s, wait: true }\ntasks:\n  - name: themes\n    action: themes.update\n    target: all\n`;
    const { code, report } = await night(simEnv(sim), yaml);
    everyWriteFailed(code, report, {
      reason: 'calm stays on 1.0.0: the service ran the update, the site did not move; a premium theme needs its licence on the site',
      failure: { code: 'not_updated', stays: [{ name: 'calm', version: '1.0.0' }] },
    });
  });
});

/** A service whose theme bulk updates succeed and install nothing. */
function stillThemes(sim: Simulator): void {
  const bulk = HANDLERS.bulkUpdateThemes;
  vi.spyOn(HANDLERS, 'bulkUpdateThemes').mockImplementation((ctx) => {
    const answer = bulk(ctx);
    return 'async' in answer ? { async: { ...answer.async, apply: () => undefined } } : answer;
  });
  expect(sim.fleet.catalog.get('calm')).toBeDefined();
}
