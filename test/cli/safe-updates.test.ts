import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { Report } from '../../src/report/report.js';
import type { Simulator } from '../../src/sim/server.js';
import { runCli, simEnv, tempDir } from '../helpers/cli.js';
import { useSimulator } from '../helpers/sim.js';
import { busiestTheme } from '../helpers/themes.js';

const start = useSimulator();

/** At 50 calls a second: the CLI's default 120 a minute would space this fleet's calls 0.5 s apart (the simulator sets no limit). */
function playbook(sim: Simulator, theme: string, extra = ''): string {
  const dir = tempDir();
  const file = join(dir, 'safe.yaml');
  writeFileSync(
    file,
    `version: 1
name: safe
settings: { rate_limit: 50/s }
tasks:
  - name: update ${theme}
    action: themes.update
    target: { environment: live, theme: ${theme} }
    with: { themes: ${theme}, skip_vulnerable_updates: false }
    backup_first: true
    health: { url: "${sim.siteUrl}", attempts: 2, interval: 50ms }
    max_failures: 0
    rollout: { canary: 1, waves: ["50%", "100%"] }
${extra}`,
  );
  return file;
}

async function run(sim: Simulator, file: string): Promise<{ code: number | null; stdout: string; report: Report }> {
  const reportPath = join(tempDir(), 'r.json');
  const result = await runCli(['run', file, '--yes', '--poll-interval', '50', '--report', reportPath], simEnv(sim));
  return { code: result.code, stdout: result.stdout + result.stderr, report: JSON.parse(readFileSync(reportPath, 'utf8')) as Report };
}

const writes = (report: Report) => report.results.filter((r) => r.step_id !== null && r.role !== 'backup');

describe('safe updates: a backup first, a health check after', () => {
  it.each(['spec', 'real'] as const)(
    'a theme version that breaks sites stops the rollout after the canary, with its restore point (%s profile)',
    async (profile) => {
      // The real service hides a new operation for 2 s: 200 ms still answers the first polls 404, ten times sooner.
      const { sim } = await start({ sites: 16, themes: 4, seed: 3, profile, ...(profile === 'real' && { operationVisibleAfterMs: 200 }) });
      const { theme, envs } = busiestTheme(sim);
      expect(envs.length).toBeGreaterThanOrEqual(3);
      sim.breakTheme(`${theme}@latest`);
      const { code, stdout, report } = await run(sim, playbook(sim, theme));
      expect(code).toBe(3);
      // Exactly one environment was updated: the canary, whose page broke.
      expect(sim.log.filter((e) => e.endpoint === 'bulkUpdateThemes')).toHaveLength(1);
      const [canary, ...rest] = writes(report).sort((a, b) => (a.status === 'failed' ? -1 : b.status === 'failed' ? 1 : 0));
      expect(canary).toMatchObject({ status: 'failed', health: { outcome: 'unhealthy', before: 'HTTP 200' } });
      expect(canary!.reason).toMatch(
        /^health: HTTP 500, page says "There has been a critical error on this website" \(2 attempts\) at http:\/\/127\.0\.0\.1:\d+\/sites\//,
      );
      expect(rest.every((r) => r.status === 'skipped')).toBe(true);
      // Its restore point: the backup the service made, found by its tag.
      const env = sim.fleet.environments.get(canary!.target.env_id!)!;
      const backup = env.backups.find((b) => b.note === canary!.restore_point!.tag)!;
      // When the backup was taken, as the service's list says: what a restore from it loses is said from it.
      expect(canary!.restore_point).toEqual({
        tag: expect.stringMatching(/^sitefleet-before-update-[a-z0-9-]+-\d{4}-\d{2}-\d{2}$/),
        backup_id: backup.id,
        taken_at: new Date(backup.created_at).toISOString(),
      });
      expect(sim.log.filter((e) => e.endpoint === 'addManualBackup')).toHaveLength(1);
      expect(stdout).toContain('restore points of the 1 failed site:');
      expect(stdout).toContain(`backup ${backup.id} (tag ${canary!.restore_point!.tag})`);
      // The command it offers continues the rollout, and stops it again at the next broken site.
      const offered = /send them \(stopping at the next failure\) with: sitefleet resume (\S+) --max-failures 1$/m.exec(stdout);
      expect(offered).not.toBeNull();
      const resumed = await runCli(['resume', offered![1]!, '--max-failures', '1', '--yes', '--poll-interval', '50'], simEnv(sim));
      expect(resumed.code).toBe(3);
      expect(sim.log.filter((e) => e.endpoint === 'bulkUpdateThemes').length).toBeGreaterThan(1);
      expect(resumed.stdout).toMatch(/run stopped: failure budget exceeded in task "update [a-z-]+": 2 failed, 1 allowed/);
    },
  );

  it('a healthy fleet updates fully: one baseline and one check per environment, none of them through the API', async () => {
    const { sim } = await start({ sites: 16, themes: 4, seed: 3 });
    const { theme, envs } = busiestTheme(sim);
    const { code, report } = await run(sim, playbook(sim, theme));
    expect(code).toBe(0);
    expect(writes(report).map((r) => [r.status, r.health?.outcome])).toEqual(envs.map(() => ['succeeded', 'healthy']));
    for (const id of envs) expect(sim.fleet.environments.get(id)!.themes.get(theme)!.version).toBe(sim.fleet.catalog.get(theme)!.versions.at(-1));
    // One baseline and one check per environment, at its own domain.
    const domains = envs.map((id) => sim.fleet.environments.get(id)!.domains[0]!.name).sort();
    const checked = sim.siteLog.map((e) => e.domain);
    expect([...new Set(checked)].sort()).toEqual(domains);
    expect(checked).toHaveLength(2 * envs.length);
    // The API saw none of them, and one domain read per environment besides the run's own calls.
    expect(sim.log.every((e) => e.path.startsWith('/v2/'))).toBe(true);
    expect(sim.log.filter((e) => e.endpoint === 'listDomains').length).toBeLessThanOrEqual(
      [...sim.fleet.environments.values()].filter((e) => e.displayName === 'live' && e.themes.has(theme)).length,
    );
    expect(writes(report).every((r) => typeof r.restore_point?.backup_id === 'number')).toBe(true);
  });

  it('a site already broken before its write gets no write: held broken_before, counted against the budget (max_failures: 0 stops the rollout)', async () => {
    const { sim } = await start({ sites: 16, themes: 4, seed: 3 });
    const { theme, envs } = busiestTheme(sim);
    const brokenDomain = sim.fleet.environments.get(envs[1]!)!.domains[0]!.name;
    sim.breakSite(brokenDomain);
    const { code, stdout, report } = await run(sim, playbook(sim, theme));
    expect(code).toBe(3);
    const broken = writes(report).find((r) => r.target.env_id === envs[1])!;
    expect(broken).toMatchObject({
      status: 'held',
      attempts: 0,
      held: { code: 'broken_before', counts_against_budget: true },
      health: { outcome: 'unhealthy before', before: expect.stringContaining('HTTP 500') },
    });
    expect(sim.log.filter((e) => e.endpoint === 'bulkUpdateThemes' && e.path.includes(envs[1]!))).toEqual([]);
    expect(stdout).toContain(`held ${broken.target.site}/live (update ${theme}): broken_before: `);
    expect(stdout).toMatch(/run stopped: failure budget exceeded in task "update [^"]+": 1 failed, 0 allowed/);
    expect(stdout).not.toContain('not blamed');
  });

  it('a backup that fails means no write there: the step is skipped, "backup failed"', async () => {
    const { sim } = await start({ sites: 16, themes: 4, seed: 3, failOperations: 1 });
    const { theme, envs } = busiestTheme(sim);
    const file = playbook(sim, theme).replace('max_failures: 0', 'max_failures: 100%');
    writeFileSync(file, readFileSync(file, 'utf8').replace('max_failures: 0', 'max_failures: "100%"'));
    const { code, report } = await run(sim, file);
    expect(code).toBe(1);
    expect(sim.log.filter((e) => e.endpoint === 'bulkUpdateThemes')).toHaveLength(0);
    expect(writes(report)).toHaveLength(envs.length);
    for (const r of writes(report)) expect(r).toMatchObject({ status: 'skipped', reason: expect.stringMatching(/^backup failed: operation failed: /) });
    expect(report.results.filter((r) => r.role === 'backup').every((r) => r.status === 'failed')).toBe(true);
  });

  it('an environment with no domain to check is left alone, or fails unsent with on_missing_domain: fail', async () => {
    const { sim } = await start({ sites: 16, themes: 4, seed: 3 });
    const { theme, envs } = busiestTheme(sim);
    const file = playbook(sim, theme);
    const text = readFileSync(file, 'utf8').replace('attempts: 2,', 'attempts: 2, domain: "*.nowhere.test",');
    writeFileSync(file, text);
    const plan = await runCli(['plan', file, '-v'], simEnv(sim));
    expect(plan.code).toBe(0);
    expect(plan.stdout).toContain(`0 calls would be sent`);
    expect(plan.stdout).toContain('health: no domain to check matching *.nowhere.test (1 listed); not updated (on_missing_domain: skip)');
    writeFileSync(file, text.replace('domain: "*.nowhere.test",', 'domain: "*.nowhere.test", on_missing_domain: fail,'));
    const { code, report } = await run(sim, file);
    expect(code).toBe(3);
    expect(sim.log.filter((e) => e.method !== 'GET')).toHaveLength(0);
    expect(writes(report).filter((r) => r.status === 'failed')).toHaveLength(1); // the canary, then the budget stopped it
    expect(writes(report)).toHaveLength(envs.length);
    expect(writes(report)[0]).toMatchObject({ attempts: 0, reason: expect.stringContaining('(on_missing_domain: fail)') });
  });

  it('health and backup_first guard writes only: on a login link they are exit 2 naming the field', async () => {
    const dir = tempDir();
    const file = join(dir, 'bad.yaml');
    writeFileSync(
      file,
      'version: 1\nname: bad\ncompany: 0b9a3f7e-4c1d-4e8f-9a2b-3c4d5e6f7a8b\ntasks:\n  - name: links\n    action: admin_users.login_link\n    target: all\n    with: { email: ops@example.org, output_file: l.json }\n    health: true\n',
    );
    const result = await runCli(['validate', file]);
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/bad\.yaml:9:\d+: tasks\.0\.health: health guards actions that change an environment: themes\.update/);
    writeFileSync(
      file,
      readFileSync(file, 'utf8')
        .replace('health: true', "health: { url: 'https://{{domian}}/' }")
        .replace('admin_users.login_link', 'php.set_version')
        .replace('{ email: ops@example.org, output_file: l.json }', '{ php_version: "8.3" }'),
    );
    const typo = await runCli(['validate', file]);
    expect(typo.code).toBe(2);
    expect(typo.stderr).toContain('tasks.0.health.url: unknown template {{domian}}');
  });
});
