import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { Report } from '../../src/report/report.js';
import { HANDLERS } from '../../src/sim/handlers.js';
import type { Simulator } from '../../src/sim/server.js';
import { runCli, simEnv, tempDir, writePlaybook } from '../helpers/cli.js';
import { useSimulator } from '../helpers/sim.js';
import { installed, shapeFleet } from '../helpers/themes.js';
import { call, settled } from '../sim/http.js';

const start = useSimulator();
afterEach(() => vi.restoreAllMocks());

async function night(sim: Simulator, withBlock: string): Promise<{ code: number | null; stdout: string; report: Report }> {
  const dir = tempDir();
  const file = writePlaybook(
    `version: 1\nname: pinned\nsettings: { rate_limit: 50/s, wait: true }\ntasks:\n  - name: themes\n    action: themes.update\n    target: all\n    with: ${withBlock}\n`,
    dir,
  );
  const reportPath = join(dir, 'r.json');
  const result = await runCli(['run', file, '--yes', '--report', reportPath], simEnv(sim));
  return { code: result.code, stdout: result.stdout, report: JSON.parse(readFileSync(reportPath, 'utf8')) as Report };
}

/** A release the plan cannot have seen: it lands in the catalogue as soon as the first listing read is answered. */
function releaseAfterTheFirstRead(sim: Simulator, theme: string, version: string): void {
  const listThemes = HANDLERS.listThemes;
  let read = false;
  vi.spyOn(HANDLERS, 'listThemes').mockImplementation((ctx) => {
    const answer = listThemes(ctx);
    if (!read) sim.fleet.catalog.get(theme)!.versions.push(version);
    read = true;
    return answer;
  });
}

describe('what was judged is what gets installed', () => {
  it('the simulator serves the pinned update as the notes say: 202 with a wp-theme:update operation, the body checked', async () => {
    const { sim } = await start({ sites: 2, seed: 5, operationDelayMs: 0 });
    shapeFleet(sim, { calm: { versions: ['1.0.0', '1.0.1', '1.1.0'], vulnerable: [] } });
    const env = [...sim.fleet.environments.values()][0]!;
    const path = `/sites/environments/${env.id}/themes`;
    const accepted = await call(sim, 'PUT', path, { name: 'calm', update_version: '1.0.1' });
    expect(accepted.status).toBe(202);
    expect(accepted.body.operation_id).toMatch(/^wp-theme:update-/);
    expect((await settled(sim, accepted.body.operation_id as string)).status).toBe(200);
    // The version named, not the newest.
    expect(env.themes.get('calm')!.version).toBe('1.0.1');
    expect((await call(sim, 'PUT', path, { name: 'calm' })).status).toBe(400);
    expect((await call(sim, 'PUT', path, { name: 'calm', update_version: '1.0.1', themes: [] })).status).toBe(400);
    expect((await call(sim, 'PUT', path, { name: 'calm', update_version: '9.9.9' })).body.message).toBe('update_version: 9.9.9 is not a version of calm');
    expect((await call(sim, 'PUT', path, { name: 'other', update_version: '1.0.1' })).status).toBe(400);
  });

  it('max_bump: patch installs the patch it judged though a minor release came out before the write: pinned, and read back', async () => {
    const { sim } = await start({ sites: 4, seed: 5 });
    shapeFleet(sim, { calm: { versions: ['1.0.0', '1.0.1'], vulnerable: [] } });
    releaseAfterTheFirstRead(sim, 'calm', '1.1.0');
    const { code, report } = await night(sim, '{ max_bump: patch }');
    expect(code).toBe(0);
    // The bulk update would have installed 1.1.0, beyond max_bump: patch.
    expect([...new Set(installed(sim).values())]).toEqual(['1.0.1']);
    expect(sim.log.filter((e) => e.endpoint === 'bulkUpdateThemes')).toEqual([]);
    const writes = report.results.filter((r) => r.step_id !== null);
    expect(writes).toHaveLength(sim.fleet.environments.size);
    for (const r of writes) {
      expect(r.request!.body).toEqual({ name: 'calm', update_version: '1.0.1' });
      expect(r.status).toBe('succeeded');
      expect(r.runs).toEqual([{ name: 'calm', version: '1.0.1' }]);
    }
  });

  it('an environment that runs another version than was judged after its write: the step fails, saying which, in the report and the summary', async () => {
    const { sim } = await start({ sites: 2, seed: 5 });
    shapeFleet(sim, { calm: { versions: ['1.0.0', '1.0.1', '1.0.2'], vulnerable: [] } });
    // A service that answers the pinned update and installs another version than the one named.
    const updateTheme = HANDLERS.updateTheme;
    vi.spyOn(HANDLERS, 'updateTheme').mockImplementation((ctx) => updateTheme({ ...ctx, body: { ...(ctx.body as object), update_version: '1.0.1' } }));
    const { code, stdout, report } = await night(sim, '{ max_bump: minor }');
    expect(code).toBe(1);
    const writes = report.results.filter((r) => r.step_id !== null);
    expect(writes.length).toBeGreaterThan(0);
    for (const r of writes) {
      expect(r.status).toBe('failed');
      expect(r.reason).toBe('verify: the environment runs calm 1.0.1, not 1.0.2 as judged');
      expect(r.runs).toEqual([{ name: 'calm', version: '1.0.1' }]);
    }
    expect(stdout).toContain('the environment runs calm 1.0.1, not 1.0.2 as judged');
  });

  it('read back with its wave: a canary that did not move crosses max_failures: 0 and no later wave is sent', async () => {
    const { sim } = await start({ sites: 4, seed: 5 });
    shapeFleet(sim, { calm: { versions: ['1.0.0', '1.0.1', '1.0.2'], vulnerable: [] } });
    // A service that answers the pinned update and installs another version than the one named.
    const updateTheme = HANDLERS.updateTheme;
    vi.spyOn(HANDLERS, 'updateTheme').mockImplementation((ctx) => updateTheme({ ...ctx, body: { ...(ctx.body as object), update_version: '1.0.1' } }));
    const { code, report } = await night(sim, '{ max_bump: minor }\n    max_failures: 0\n    rollout: { canary: 1, waves: ["100%"] }');
    expect(code).toBe(3);
    const writes = report.results.filter((r) => r.step_id !== null);
    expect(writes.filter((r) => r.status === 'failed').map((r) => r.reason)).toEqual(['verify: the environment runs calm 1.0.1, not 1.0.2 as judged']);
    expect(writes.filter((r) => r.status === 'skipped').length).toBe(writes.length - 1);
    expect(sim.log.filter((e) => e.endpoint === 'updateTheme').length).toBe(1);
  });

  it('a task with no policy that judges the version keeps its bulk update and its plan; a step read back records what it runs', async () => {
    const { sim } = await start({ sites: 3, seed: 5 });
    shapeFleet(sim, { calm: { versions: ['1.0.0', '1.0.1'], vulnerable: [] } });
    const { code, report } = await night(sim, '{}');
    expect(code).toBe(0);
    expect(sim.log.filter((e) => e.endpoint === 'updateTheme')).toEqual([]);
    for (const r of report.results.filter((x) => x.step_id !== null)) {
      expect(r.request!.body).toEqual({ themes: [{ name: 'calm' }] });
      // Every item write is read back, but one the listing confirmed was read by the same rule and is not read again.
      expect(r.runs).toEqual(r.confirmed_by === 'listing' ? undefined : [{ name: 'calm', version: '1.0.1' }]);
    }
  });

  it('a held write is read back too: what it runs is recorded, and another version than was judged fails it, saying which', async () => {
    const { sim } = await start({ sites: 2, seed: 5 });
    shapeFleet(sim, { calm: { versions: ['1.0.0', '1.0.1', '1.0.2'], vulnerable: [] } });
    const updateTheme = HANDLERS.updateTheme;
    let n = 0;
    // The first environment is given another version than the one named; the second the one named.
    vi.spyOn(HANDLERS, 'updateTheme').mockImplementation((ctx) =>
      updateTheme(n++ === 0 ? { ...ctx, body: { ...(ctx.body as object), update_version: '1.0.1' } } : ctx),
    );
    // Every clear refused: each write is held (cache_not_cleared).
    sim.setFaults('500=1', { only: ['clearCache'] });
    const { code, report } = await night(sim, `{ max_bump: minor }\n    health: { url: "${sim.siteUrl}", attempts: 2, interval: 50ms }`);
    expect(code).toBe(1);
    const writes = report.results.filter((r) => r.step_id !== null);
    expect(writes.length).toBeGreaterThan(1);
    const [failed, ...held] = writes.sort((a, b) => (a.status < b.status ? -1 : 1));
    expect(failed).toMatchObject({
      status: 'failed',
      reason: 'verify: the environment runs calm 1.0.1, not 1.0.2 as judged',
      runs: [{ name: 'calm', version: '1.0.1' }],
    });
    for (const r of held) expect(r).toMatchObject({ status: 'held', held: { code: 'cache_not_cleared' }, runs: [{ name: 'calm', version: '1.0.2' }] });
  });

  it('a pinned night not waited for ends accepted: nothing is read back before its operations ran, and nothing is called behind', async () => {
    const { sim } = await start({ sites: 4, seed: 5 });
    shapeFleet(sim, { calm: { versions: ['1.0.0', '1.0.1'], vulnerable: [] } });
    const dir = tempDir();
    const file = writePlaybook(
      `version: 1\nname: pinned\nsettings: { rate_limit: 50/s }\ntasks:\n  - name: themes\n    action: themes.update\n    target: all\n    with: { max_bump: patch }\n`,
      dir,
    );
    const reportPath = join(dir, 'r.json');
    const result = await runCli(['run', file, '--yes', '--report', reportPath], simEnv(sim));
    const report = JSON.parse(readFileSync(reportPath, 'utf8')) as Report;
    expect(result.code).toBe(0);
    expect(report.results.filter((r) => r.step_id).map((r) => [r.status, r.runs])).toEqual(
      report.results.filter((r) => r.step_id).map(() => ['accepted', undefined]),
    );
    expect(result.stdout).toContain('follow them with: sitefleet status');
  });
});
