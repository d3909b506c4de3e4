import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { Report } from '../../src/report/report.js';
import type { Simulator } from '../../src/sim/server.js';
import { runCli, simEnv, tempDir } from '../helpers/cli.js';
import { useSimulator } from '../helpers/sim.js';
import { shapeFleet } from '../helpers/themes.js';

const start = useSimulator();

/**
 * One site whose live environment has three themes with a patch offered; the second one's patch breaks the site.
 * At 50 calls a second: the CLI's default 120 a minute paces a night's calls 0.4 s apart once its first 30 are out.
 */
async function threeThemes(maxFailures: string, rollout = '', onBroken = 'restore'): Promise<{ sim: Simulator; file: string }> {
  const { sim } = await start({ sites: 1, seed: 5, clearCacheGapMs: 0 });
  const patch = { versions: ['1.0.0', '1.0.1'], vulnerable: [] };
  shapeFleet(sim, { a: patch, b: patch, c: patch });
  sim.breakTheme('b@1.0.1');
  const file = join(tempDir(), 'p.yaml');
  writeFileSync(
    file,
    `version: 1
name: pinned guarded
settings: { rate_limit: 50/s }
tasks:
  - name: themes
    action: themes.update
    target: { environment: live }
    with: { max_bump: minor }
    backup_first: true
${maxFailures}${rollout}    health: { url: "${sim.siteUrl}", attempts: 2, interval: 50ms, on_broken: ${onBroken} }
`,
  );
  return { sim, file };
}

describe('pinned updates of several themes on one guarded environment', () => {
  it.each([
    ['the run stops at its budget', '    max_failures: 0\n'],
    ['the run goes on', ''],
  ])(
    'on_broken: restore keeps a guard a write: a restore after the second theme broke the site undoes the first: it is not reported done (%s)',
    async (_, maxFailures) => {
      const { sim, file } = await threeThemes(maxFailures);
      const path = join(tempDir(), 'r.json');
      const res = await runCli(['run', file, '--yes', '--poll-interval', '20', '--report', path], simEnv(sim));
      expect(res.code).not.toBe(0);
      const report = JSON.parse(readFileSync(path, 'utf8')) as Report;
      const live = [...sim.fleet.environments.values()].find((e) => e.displayName === 'live')!;
      // The restore put back the backup taken before the first write: theme a runs 1.0.0 again.
      expect(live.themes.get('a')!.version).toBe('1.0.0');
      const a = report.results.find((r) => r.step_id?.endsWith(':theme=a'))!;
      expect(a.status).toBe('failed');
      expect(a.reason).toMatch(/^undone: the environment was put back from backup \d+, taken before this write, after b 1\.0\.0 → 1\.0\.1 broke its site$/);
      expect(res.stdout).toContain('undone: the environment was put back from backup');
      const b = report.results.find((r) => r.step_id?.endsWith(':theme=b'))!;
      expect(b).toMatchObject({ status: 'failed', restored: { status: 'succeeded' } });
      // No step is reported done whose change the environment no longer runs.
      for (const r of report.results.filter((x) => x.status === 'succeeded' && x.role !== 'backup')) {
        const theme = (r.request!.body as { name: string }).name;
        expect(live.themes.get(theme)!.version).toBe('1.0.1');
      }
    },
  );

  it('staging first: the staging store records nothing of a version a restore undid, and the failure of the one that broke the site', async () => {
    const { sim, file } = await threeThemes('', '    rollout: { staging_first: true, soak: 20h }\n');
    const env = simEnv(sim);
    const path = join(tempDir(), 'r.json');
    const res = await runCli(['run', file, '--yes', '--poll-interval', '20', '--report', path], env);
    expect(res.code).not.toBe(0);
    const report = JSON.parse(readFileSync(path, 'utf8')) as Report;
    const staging = [...sim.fleet.environments.values()].find((e) => e.displayName === 'staging')!;
    expect(report.results.find((r) => r.role === 'staging' && r.step_id?.endsWith(':theme=a'))).toMatchObject({
      status: 'failed',
      reason: expect.stringMatching(/^undone: /) as unknown,
    });
    const store = join(env.SITEFLEET_STATE_DIR!, 'staging', `${sim.companyId}.jsonl`);
    const lines = readFileSync(store, 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as { env_id: string; theme: string; version: string; kind: string });
    const of = (theme: string) => lines.filter((l) => l.env_id === staging.id && l.theme === theme).map((l) => `${l.version} ${l.kind}`);
    // a 1.0.1 passed its checks and was put back only because b broke the site: staged again on a later night, never barred.
    expect(of('a')).toEqual([]);
    expect(of('b')).toEqual(['1.0.1 failed']);
    expect(of('c')).toEqual(['1.0.1 healthy']);
  });

  it('sitefleet restore the morning after: the environment its writes broke together is restored once', async () => {
    const { sim, file } = await threeThemes('    max_failures: 0\n', '', 'leave');
    const path = join(tempDir(), 'r.json');
    const ran = await runCli(['run', file, '--yes', '--poll-interval', '20', '--report', path], simEnv(sim));
    expect(ran.code).toBe(3);
    const restored = await runCli(['restore', path, '--yes', '--poll-interval', '20'], simEnv(sim));
    expect(restored.code, restored.stdout + restored.stderr).toBe(0);
    const live = [...sim.fleet.environments.values()].find((e) => e.displayName === 'live')!;
    expect([...live.themes].map(([n, t]) => `${n} ${t.version}`).sort()).toEqual(['a 1.0.0', 'b 1.0.0', 'c 1.0.0']);
    expect(sim.log.filter((e) => e.endpoint === 'restoreBackup' && e.status < 300)).toHaveLength(1);
    const report = JSON.parse(readFileSync(path, 'utf8')) as Report;
    // The one look after the three saw the site broken: each write failed with it, none reported done.
    for (const theme of ['a', 'b', 'c'])
      expect(report.results.find((r) => r.step_id?.endsWith(`:theme=${theme}`))).toMatchObject({
        status: 'failed',
        reason: expect.stringMatching(/^health: HTTP 500/) as unknown,
      });
    expect(report.results.filter((r) => r.restored?.status === 'succeeded')).toHaveLength(1);
  });

  it('resume after a kill while the restore went: the writes it undid are said so, and the rest is sent', async () => {
    const { sim, file } = await threeThemes('');
    const path = join(tempDir(), 'r.json');
    await runCli(['run', file, '--yes', '--poll-interval', '20', '--report', path], simEnv(sim));
    // What a kill just after the restore was accepted leaves: the journal up to that answer.
    const journal = path.replace(/\.json$/, '.journal.jsonl');
    const lines = readFileSync(journal, 'utf8').split('\n').filter(Boolean);
    const accepted = lines.findIndex((l) => l.startsWith('{"t":"update"') && l.includes('"restored":{') && l.includes('"status":"accepted"'));
    expect(accepted).toBeGreaterThan(0);
    writeFileSync(
      journal,
      lines
        .slice(0, accepted + 1)
        .map((l) => `${l}\n`)
        .join(''),
    );
    const live = [...sim.fleet.environments.values()].find((e) => e.displayName === 'live')!;
    live.themes.get('c')!.version = '1.0.0';
    const resumed = await runCli(['resume', path, '--yes', '--poll-interval', '20'], simEnv(sim));
    expect(resumed.code).toBe(1);
    const report = JSON.parse(readFileSync(path, 'utf8')) as Report;
    const status = (theme: string) => report.results.find((r) => r.step_id?.endsWith(`:theme=${theme}`))!;
    expect(status('a')).toMatchObject({ status: 'failed', reason: expect.stringMatching(/^undone: /) as unknown });
    expect(status('b')).toMatchObject({ status: 'failed', restored: { status: 'succeeded' } });
    expect(status('c').status, JSON.stringify(status('c'))).toBe('succeeded');
    expect([...live.themes].map(([n, t]) => `${n} ${t.version}`).sort()).toEqual(['a 1.0.0', 'b 1.0.0', 'c 1.0.1']);
  });
});

describe('pinned updates under health.on_broken: isolate', () => {
  // One guard for the environment: the three writes are looked at once, the site restored once, and
  // isolation takes the three apart as it would a bulk write's (life/guard-group.ts).
  it('the second theme breaks the site: isolation over the three finds it; the other two are in again', async () => {
    const { sim, file } = await threeThemes('', '', 'isolate');
    const path = join(tempDir(), 'r.json');
    const res = await runCli(['run', file, '--yes', '--poll-interval', '20', '--report', path], simEnv(sim));
    expect(res.code, res.stdout + res.stderr).toBe(1);
    const report = JSON.parse(readFileSync(path, 'utf8')) as Report;
    const live = [...sim.fleet.environments.values()].find((e) => e.displayName === 'live')!;
    const of = (theme: string) => report.results.find((r) => r.step_id?.endsWith(`:theme=${theme}`))!;
    expect(of('b')).toMatchObject({ status: 'failed', reason: expect.stringMatching(/^isolated: b 1\.0\.0 → 1\.0\.1 broke the site/) as unknown });
    // c's look it was: it carries the group's isolation, and its own update is in.
    expect(of('c')).toMatchObject({ status: 'succeeded', isolation: { outcome: 'found', culprits: [{ theme: 'b' }] } });
    expect(of('a')).toMatchObject({ status: 'succeeded', reason: expect.stringMatching(/^in: /) as unknown });
    expect(sim.log.filter((e) => e.endpoint === 'restoreBackup' && e.status < 300).length).toBeLessThanOrEqual(3);
    expect(Object.fromEntries([...live.themes].map(([n, t]) => [n, t.version]))).toEqual({ a: '1.0.1', b: '1.0.0', c: '1.0.1' });
  });
});
