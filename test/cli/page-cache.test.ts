import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { Report, ReportResult } from '../../src/report/report.js';
import type { Simulator } from '../../src/sim/server.js';
import { readJournal } from '../../src/run/journal.js';
import { runCli, simEnv, startCli, tempDir } from '../helpers/cli.js';
import { useSimulator, waitFor } from '../helpers/sim.js';
import { busiestTheme } from '../helpers/themes.js';

const start = useSimulator();

/** One guarded update of `theme` on every live environment that has it; `health` adds to the check's settings. */
function playbook(sim: Simulator, theme: string, health = '', extra = 'max_failures: "100%"'): string {
  const file = join(tempDir(), 'cached.yaml');
  writeFileSync(
    file,
    `version: 1
name: cached
tasks:
  - name: update ${theme}
    action: themes.update
    target: { environment: live, theme: ${theme} }
    with: { themes: ${theme}, skip_vulnerable_updates: false }
    health: { url: "${sim.siteUrl}", attempts: 2, interval: 50ms${health} }
    ${extra}
`,
  );
  return file;
}

async function run(sim: Simulator, file: string): Promise<{ code: number | null; out: string; report: Report }> {
  const path = join(tempDir(), 'r.json');
  const result = await runCli(['run', file, '--yes', '--poll-interval', '50', '--report', path], simEnv(sim));
  return { code: result.code, out: result.stdout + result.stderr, report: JSON.parse(readFileSync(path, 'utf8')) as Report };
}

const writes = (report: Report): ReportResult[] => report.results.filter((r) => r.step_id !== null);

/** A fleet whose busiest theme's newest version breaks every site that installs it, each site behind its page cache. */
async function brokenBehindCache(options: Parameters<typeof start>[0] = {}) {
  const { sim } = await start({ sites: 8, themes: 4, seed: 3, ...options });
  const { theme, envs } = busiestTheme(sim);
  expect(envs.length).toBeGreaterThanOrEqual(2);
  sim.breakTheme(`${theme}@latest`);
  return { sim, theme, envs };
}

describe('health.clear_cache: the check after a write sees the page visitors will get', () => {
  it('plan -v shows the clear that follows each guarded write, as it will be sent; a dry run sends none; clear_cache: false shows none', async () => {
    const { sim, theme, envs } = await brokenBehindCache();
    const file = playbook(sim, theme);
    const plan = await runCli(['plan', file, '-v'], simEnv(sim));
    expect(plan.code).toBe(0);
    expect(plan.stdout).toContain('health, cache clear');
    expect(plan.stdout).toContain(
      `and after each of ${envs.length} guarded writes, before the check after it: POST /sites/tools/clear-cache {"environment_id": ENV} (health.clear_cache).`,
    );
    for (const env of envs) expect(plan.stdout).toContain(`after the write POST /sites/tools/clear-cache {"environment_id": "${env}"}, then GET`);
    const dry = await runCli(['run', file, '--dry-run', '--report', join(tempDir(), 'd.json')], simEnv(sim));
    expect(dry.code).toBe(0);
    expect(sim.log.filter((e) => e.method !== 'GET')).toHaveLength(0);
    const off = await runCli(['plan', playbook(sim, theme, ', clear_cache: false'), '-v'], simEnv(sim));
    expect(off.stdout).not.toContain('clear-cache');
    expect(off.stdout).not.toContain('cache clear');
  });

  it('an update that breaks sites behind their page cache is caught: the cache is cleared through the service, its operation followed, then the page checked', async () => {
    const { sim, theme, envs } = await brokenBehindCache();
    const { code, report } = await run(sim, playbook(sim, theme));
    expect(code).toBe(1);
    expect(writes(report)).toHaveLength(envs.length);
    for (const r of writes(report)) {
      expect(r).toMatchObject({ status: 'failed', health: { outcome: 'unhealthy', before: 'HTTP 200', cache: { outcome: 'cleared' } } });
      expect(r.health!.cache!.operation_id).toMatch(/^cache:clear-/);
    }
    // One clear per write, of that write's environment, sent after its operation and before its check.
    const clears = sim.log.filter((e) => e.endpoint === 'clearCache');
    expect(clears.map((e) => (e.body as { environment_id: string }).environment_id).sort()).toEqual([...envs].sort());
    for (const r of writes(report)) {
      const clear = sim.log.find((e) => e.endpoint === 'clearCache' && e.operation_id === r.health!.cache!.operation_id)!;
      const write = sim.log.find((e) => e.operation_id === r.operation_id)!;
      const domain = sim.fleet.environments.get(r.target.env_id!)!.domains[0]!.name;
      const looks = sim.siteLog.filter((e) => e.domain === domain);
      expect(clear.at).toBeGreaterThan(write.at);
      // The baseline filled the cache; every look after the clear was the site's own answer.
      expect(looks[0]).toMatchObject({ status: 200 });
      expect(looks.filter((e) => e.at > clear.at).map((e) => [e.status, e.cached ?? false])).toEqual([
        [500, false],
        [500, false],
      ]);
    }
  });

  it('clear_cache: false checks what the cache serves: the broken update passes (what every run did before clear_cache)', async () => {
    const { sim, theme, envs } = await brokenBehindCache();
    const { code, report } = await run(sim, playbook(sim, theme, ', clear_cache: false'));
    expect(code).toBe(0);
    expect(writes(report).map((r) => [r.status, r.health?.outcome, r.health?.cache])).toEqual(envs.map(() => ['succeeded', 'healthy', undefined]));
    expect(sim.log.filter((e) => e.endpoint === 'clearCache')).toHaveLength(0);
    expect(sim.siteLog.filter((e) => e.cached).length).toBeGreaterThanOrEqual(envs.length);
  });

  it('a clear that fails holds a step whose page answered healthy, never calls it healthy, and counts against the budget', async () => {
    const { sim } = await start({ sites: 8, themes: 4, seed: 3 });
    const { theme, envs } = busiestTheme(sim);
    sim.setFaults('500=1', { only: ['clearCache'] });
    const { code, out, report } = await run(sim, playbook(sim, theme, '', 'max_failures: 0\n    rollout: { canary: 1, waves: ["100%"] }'));
    expect(code).toBe(3); // the budget of 0 stopped the rollout at its canary, held
    const [held, ...rest] = writes(report).sort((a, b) => (a.status === 'held' ? -1 : b.status === 'held' ? 1 : 0));
    expect(held).toMatchObject({
      status: 'held',
      held: { code: 'cache_not_cleared', counts_against_budget: true, detail: expect.stringContaining('500') },
      health: { outcome: 'not checked', after: 'HTTP 200', cache: { outcome: 'not cleared' } },
      reason: expect.stringMatching(
        /^cache_not_cleared: the page cache was not cleared \(.*\), so the healthy page seen at http:\/\/127\.0\.0\.1:\d+\/sites\//,
      ),
    });
    // The clear is safe to repeat: retried as a 5xx is, and never more.
    expect(sim.log.filter((e) => e.endpoint === 'clearCache')).toHaveLength(5);
    expect(rest.map((r) => r.status)).toEqual(rest.map(() => 'skipped'));
    expect(writes(report)).toHaveLength(envs.length);
    expect(out).toMatch(/failure budget exceeded/);
  });

  it('a clear the service refuses as missing (404) is said once for the run, and each look goes on, marked not available; nothing is held', async () => {
    const { sim } = await start({ sites: 8, themes: 4, seed: 3, missingEndpoints: ['clearCache'] });
    const { theme, envs } = busiestTheme(sim);
    expect(envs.length).toBeGreaterThanOrEqual(2);
    const { code, out, report } = await run(sim, playbook(sim, theme, '', 'max_failures: 0'));
    expect(code).toBe(0);
    expect(writes(report)).toHaveLength(envs.length);
    for (const r of writes(report))
      expect(r).toMatchObject({
        status: 'succeeded',
        health: { outcome: 'healthy', after: 'HTTP 200', cache: { outcome: 'not available', detail: expect.stringContaining('404') } },
      });
    // Asked once per write, as a 4xx is (never again), each answered 404.
    expect(sim.log.filter((e) => e.endpoint === undefined && e.path === '/v2/sites/tools/clear-cache').map((e) => e.status)).toEqual(envs.map(() => 404));
    // One warning line as the run goes, one line in its summary: not one per site.
    expect(out.match(/the service has no page cache clear here/g)).toHaveLength(1);
    expect(out.match(/page cache clear not available \(the service has no such clear here: .*404.*\) for \d+ looks: each went on without it/g)).toHaveLength(1);
    expect(out).toContain(`page cache clear not available`);
    expect(out).toContain(`for ${envs.length} looks`);
  });

  it('the process killed between the write and its look after: resume clears the cache and looks, never leaving the step "succeeded" unseen', async () => {
    const { sim, theme } = await brokenBehindCache({ slowMs: 5000, clearCacheGapMs: 200, retryAfterUnitMs: 50 });
    // The clear is taken and answered 5 s later: the process dies with the write's operation ended
    // and journaled as succeeded, and nothing yet looked at the site after it.
    sim.setFaults({ slow: 1 }, { only: ['clearCache'] });
    const dir = tempDir();
    const path = join(dir, 'r.json');
    const file = playbook(sim, theme, '', 'max_failures: 0\n    rollout: { canary: 1, waves: ["100%"] }');
    const running = startCli(['run', file, '--yes', '--poll-interval', '50', '--report', path], simEnv(sim));
    await waitFor(() => [...sim.operations.all.values()].some((op) => op.kind === 'cache:clear'), 20_000);
    running.child.kill('SIGKILL');
    expect((await running.done).signal).toBe('SIGKILL');
    sim.setFaults({});
    const journaled = [...readJournal(join(dir, 'r.journal.jsonl')).results.values()].filter((r) => r.status === 'succeeded' && !r.step_id.endsWith(':backup'));
    expect(journaled).toHaveLength(1);
    expect(journaled[0]!.health).toBeUndefined();

    const resumed = await runCli(['resume', path, '--yes', '--poll-interval', '50'], simEnv(sim));
    expect(resumed.code).toBe(3);
    const report = JSON.parse(readFileSync(path, 'utf8')) as Report;
    const canary = writes(report).find((r) => r.step_id === journaled[0]!.step_id)!;
    expect(canary).toMatchObject({ status: 'failed', health: { outcome: 'unhealthy', cache: { outcome: 'cleared' } } });
    expect(canary.health!.before).toBeUndefined(); // no baseline survives the interruption
    expect(sim.log.filter((e) => e.endpoint === 'bulkUpdateThemes')).toHaveLength(1); // the write itself is not sent again
  }, 60_000);

  it('on_broken: restore clears the cache again before the check after the restore, and records it', async () => {
    const { sim, theme } = await brokenBehindCache();
    const file = playbook(sim, theme, ', on_broken: restore', 'backup_first: true\n    max_failures: 0\n    rollout: { canary: 1, waves: ["100%"] }');
    const { code, report } = await run(sim, file);
    expect(code).toBe(3);
    const canary = writes(report).find((r) => r.status === 'failed' && r.role !== 'backup')!;
    expect(canary.restored).toMatchObject({ status: 'succeeded', health: { outcome: 'healthy', cache: { outcome: 'cleared' } } });
    const restore = sim.log.find((e) => e.endpoint === 'restoreBackup')!;
    const clears = sim.log.filter((e) => e.endpoint === 'clearCache' && e.status === 202);
    expect(clears.map((e) => e.operation_id)).toEqual([canary.health!.cache!.operation_id, canary.restored!.health!.cache!.operation_id]);
    expect(clears[1]!.at).toBeGreaterThan(restore.at);
  });
});
