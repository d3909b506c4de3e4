import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { Report, ReportResult } from '../../src/report/report.js';
import type { Simulator } from '../../src/sim/server.js';
import { runCli, simEnv, tempDir, writePlaybook } from '../helpers/cli.js';
import { useSimulator } from '../helpers/sim.js';
import { busiestTheme } from '../helpers/themes.js';

const start = useSimulator();

/** One guarded update of `theme` on every live environment that has an update of it. */
function playbook(theme: string, health: string, extra = 'max_failures: "100%"'): string {
  return writePlaybook(`version: 1
name: seeing
tasks:
  - name: update ${theme}
    action: themes.update
    target: { environment: live, theme: ${theme} }
    with: { themes: ${theme}, skip_vulnerable_updates: false }
    health: { ${health}, attempts: 2, interval: 50ms }
    ${extra}
`);
}

async function run(sim: Simulator, file: string): Promise<{ code: number | null; out: string; report: Report; md: string }> {
  const path = join(tempDir(), 'r.json');
  const md = path.replace(/\.json$/, '.md');
  const result = await runCli(['run', file, '--yes', '--poll-interval', '50', '--report', path, '--summary-md', md], simEnv(sim));
  return { code: result.code, out: result.stdout + result.stderr, report: JSON.parse(readFileSync(path, 'utf8')) as Report, md: readFileSync(md, 'utf8') };
}

const writes = (report: Report): ReportResult[] => report.results.filter((r) => r.step_id !== null && r.role !== 'backup');
const sentWrites = (sim: Simulator) => sim.log.filter((e) => e.method !== 'GET');

describe('a guard that cannot see holds: no write to a page not seen healthy before it', () => {
  it('a health.url that reaches no site (a refused port) holds every write unseen: nothing is sent, the summary says what to check, exit non-zero', async () => {
    const { sim } = await start({ sites: 16, themes: 4, seed: 3 });
    const { theme, envs } = busiestTheme(sim);
    expect(envs.length).toBeGreaterThanOrEqual(3);
    // Nothing listens on port 1: the connection is refused, as a wrong template's host or port would be.
    const { code, out, report, md } = await run(sim, playbook(theme, 'url: "http://127.0.0.1:1/sites/{{domain}}/"'));
    expect(code).toBe(1);
    expect(sentWrites(sim)).toEqual([]);
    expect(writes(report)).toHaveLength(envs.length);
    for (const r of writes(report)) {
      expect(r).toMatchObject({
        status: 'held',
        attempts: 0,
        operation_id: null,
        held: { code: 'unseen', counts_against_budget: true, detail: 'could not fetch: ECONNREFUSED (2 attempts)' },
        health: { outcome: 'unhealthy before', before: 'could not fetch: ECONNREFUSED (2 attempts)' },
        reason: expect.stringMatching(
          /^unseen: no answer from http:\/\/127\.0\.0\.1:1\/sites\/.+ before the write \(could not fetch: ECONNREFUSED \(2 attempts\)\); not updated$/,
        ),
      });
    }
    const line = new RegExp(
      `no page could be seen before its write \\(update ${theme}, ${envs.length} held\\): check health\\.url \\(http://127\\.0\\.0\\.1:1/sites/.+: could not fetch: ECONNREFUSED \\(2 attempts\\)\\), DNS and the sites' answers; nothing was updated`,
    );
    expect(out).toMatch(line);
    expect(md).toContain(`**no page could be seen before its write \\(update ${theme}, ${envs.length} held\\): check health.url`);
    expect(out).toContain(`steps: 0 ok (0 accepted, 0 succeeded), 0 failed, ${envs.length} held, 0 unknown`);
    // Held, not "broken before its write (not blamed)": nothing was written to be blamed or not.
    expect(out).not.toContain('not blamed');
  });

  it('a held canary counts against the budget: the wrong template stops the rollout there (exit 3)', async () => {
    const { sim } = await start({ sites: 16, themes: 4, seed: 3 });
    const { theme, envs } = busiestTheme(sim);
    const file = playbook(theme, 'url: "http://127.0.0.1:1/sites/{{domain}}/"', 'max_failures: 0\n    rollout: { canary: 1, waves: ["100%"] }');
    const { code, out, report } = await run(sim, file);
    expect(code).toBe(3);
    expect(sentWrites(sim)).toEqual([]);
    expect(
      writes(report)
        .map((r) => r.status)
        .sort(),
    ).toEqual(['held', ...envs.slice(1).map(() => 'skipped')]);
    expect(out).toMatch(/run stopped: failure budget exceeded in task "update [^"]+": 1 failed, 0 allowed/);
    expect(out).toMatch(/no page could be seen before its write \(update [^,]+, 1 held\)/);
    // Its journal reads back (the held record is one of the run's records), and a resume holds the rest the same way.
    const offered = /with: sitefleet resume (\S+) --max-failures 1$/m.exec(out);
    expect(offered).not.toBeNull();
    const resumed = await runCli(['resume', offered![1]!, '--max-failures', '1', '--yes', '--poll-interval', '50'], simEnv(sim));
    expect(resumed.code).toBe(3);
    expect(sentWrites(sim)).toEqual([]);
    const after = JSON.parse(readFileSync(offered![1]!, 'utf8')) as Report;
    // Its wave's looks go at once: the first held crosses the budget again; a look that ended after that sends nothing either.
    const ends = writes(after).map((r) => (r.status === 'held' ? `held ${r.held?.code}` : r.status));
    expect(ends.filter((e) => e === 'held unseen').length).toBeGreaterThanOrEqual(2);
    expect(ends.every((e) => e === 'held unseen' || e === 'skipped')).toBe(true);
  });

  it('a template that reaches the wrong page (answered 401) holds every write broken_before', async () => {
    const { sim } = await start({ sites: 16, themes: 4, seed: 3 });
    const { theme, envs } = busiestTheme(sim);
    // `/site/` for `/sites/`: the simulator's API answers it, 401, as a wrong path on a real host answers 404.
    const { code, out, report } = await run(sim, playbook(theme, `url: "${sim.siteUrl.replace('/sites/', '/site/')}"`));
    expect(code).toBe(1);
    expect(sim.log.filter((e) => e.endpoint === 'bulkUpdateThemes')).toEqual([]);
    expect(writes(report).map((r) => [r.status, r.held?.code, r.health?.before])).toEqual(envs.map(() => ['held', 'broken_before', 'HTTP 401 (2 attempts)']));
    expect(out).toMatch(/no page could be seen before its write .*: HTTP 401 \(2 attempts\)\), DNS and the sites' answers; nothing was updated/);
  });

  it('one site answering 500 before its write is held broken_before; the others are updated, and the night says no "nothing seen"', async () => {
    const { sim } = await start({ sites: 16, themes: 4, seed: 3 });
    const { theme, envs } = busiestTheme(sim);
    const brokenDomain = sim.fleet.environments.get(envs[1]!)!.domains[0]!.name;
    sim.breakSite(brokenDomain);
    const { code, out, report } = await run(sim, playbook(theme, `url: "${sim.siteUrl}"`));
    expect(code).toBe(1); // a held step is a problem
    const broken = writes(report).find((r) => r.target.env_id === envs[1])!;
    expect(broken).toMatchObject({
      status: 'held',
      attempts: 0,
      held: { code: 'broken_before', counts_against_budget: true, detail: expect.stringMatching(/^HTTP 500, page says /) },
      health: { outcome: 'unhealthy before' },
    });
    expect(
      writes(report)
        .filter((r) => r !== broken)
        .map((r) => [r.status, r.health?.outcome]),
    ).toEqual(envs.slice(1).map(() => ['succeeded', 'healthy']));
    const updated = sim.log.filter((e) => e.endpoint === 'bulkUpdateThemes').map((e) => (e.body as { environment_ids?: string[] }).environment_ids ?? e.body);
    expect(updated).toHaveLength(envs.length - 1);
    expect(JSON.stringify(updated)).not.toContain(envs[1]);
    expect(sim.fleet.environments.get(envs[1]!)!.themes.get(theme)!.version).not.toBe(sim.fleet.catalog.get(theme)!.versions.at(-1));
    expect(out).toContain(`held ${broken.target.site}/live (update ${theme}): broken_before: `);
    expect(out).not.toContain('no page could be seen');
  });

  it('when_broken_before: update keeps the write to a site broken before: listed, not blamed, not counted', async () => {
    const { sim } = await start({ sites: 16, themes: 4, seed: 3 });
    const { theme, envs } = busiestTheme(sim);
    sim.breakSite(sim.fleet.environments.get(envs[1]!)!.domains[0]!.name);
    const { code, out, report } = await run(sim, playbook(theme, `url: "${sim.siteUrl}", when_broken_before: update`, 'max_failures: 0'));
    expect(code).toBe(0);
    const broken = writes(report).find((r) => r.target.env_id === envs[1])!;
    expect(broken).toMatchObject({ status: 'succeeded', health: { outcome: 'unhealthy before', before: expect.stringContaining('HTTP 500') } });
    expect(broken.held).toBeUndefined();
    expect(writes(report).every((r) => r.status === 'succeeded')).toBe(true);
    expect(out).toContain(`broken before its write (not blamed) ${broken.target.site}/live`);
  });
});
