import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { Report } from '../../src/report/report.js';
import { runCli, simEnv, tempDir, writePlaybook } from '../helpers/cli.js';
import { forMarkdown } from '../../src/util/safe-text.js';
import { requestsTo, stagedAkismet } from '../helpers/plugins.js';
import { useSimulator } from '../helpers/sim.js';
import { decisionsOf, HOUR, T0 } from '../helpers/staging.js';

const start = useSimulator();

/** One night's run at `now`, with the state folder of `env` (what staging ran is kept there between nights). */
async function run(env: Record<string, string>, yaml: string, now: number) {
  const dir = tempDir();
  const [reportPath, markdown] = [join(dir, 'r.json'), join(dir, 'summary.md')];
  const args = ['run', writePlaybook(yaml, dir), '--yes', '--poll-interval', '50', '--report', reportPath, '--summary-md', markdown];
  const result = await runCli(args, env, { now: () => now });
  return { ...result, report: JSON.parse(readFileSync(reportPath, 'utf8')) as Report, markdown: readFileSync(markdown, 'utf8') };
}

/**
 * Staging soaked akismet 2.5.3 (a night at T0, the soak of 20 h over by the next); then 2.5.4 came
 * out, and the listing now flags 2.5.3 (and 2.5.2, which live runs) vulnerable.
 */
async function soakedThenFlagged(rollout?: string) {
  const { sim } = await start({ sites: 5, pluginsPerEnv: 6, seed: 11, createRate: '100/s' }); // nights of backups: not the creating-call limit
  const staged = stagedAkismet(sim, ['2.5.2', '2.5.3']);
  const yaml = rollout ? staged.yaml.replace('rollout: { staging_first: true, soak: 20h }', `rollout: ${rollout}`) : staged.yaml;
  expect(yaml).toContain('staging_first: true');
  const env = simEnv(sim);
  const first = await run(env, yaml, T0);
  expect(first.code, first.stderr).toBe(0);
  const runs = () => new Map(staged.envs.map((e) => [e.id, e.plugins.get(staged.name)!.version]));
  for (const s of staged.stagings) expect(runs().get(s.id)).toBe('2.5.3');
  const item = sim.fleet.pluginCatalog.get(staged.name)!;
  item.versions.push('2.5.4');
  item.vulnerable.add('2.5.2').add('2.5.3');
  const liveWrites = (from: number) => requestsTo(sim, 'updatePlugin', from).filter((e) => staged.stagedLive.some((l) => e.path.split('/')[4] === l.id));
  return { ...staged, sim, env, yaml, runs, liveWrites };
}

describe('rollout.staging_first when the version staging soaked is flagged vulnerable once a newer one is out', () => {
  it('the newer version is staged first and soaks; live waits for it, says why and what lets it through, and takes it after the soak', async () => {
    const { sim, env, yaml, runs, liveWrites, stagings, stagedLive } = await soakedThenFlagged();
    expect(stagedLive.length).toBeGreaterThan(0);
    const from = sim.log.length;
    const second = await run(env, yaml, T0 + 24 * HOUR);
    expect(second.code, second.stderr).toBe(0);
    // Live takes nothing unstaged: not the soaked 2.5.3 (flagged), nor 2.5.4 (never staged).
    expect(liveWrites(from)).toEqual([]);
    for (const l of stagedLive) expect(runs().get(l.id), l.id).toBe('2.5.2');
    for (const s of stagings) expect(runs().get(s.id), s.id).toBe('2.5.4');
    // Each live environment's skip says it waits for staging, why, and what a person may do.
    const why = 'akismet 2.5.3 soaked on staging is now flagged vulnerable; rollout.security_bypass: true sends 2.5.4 to live unstaged';
    for (const l of stagedLive) {
      const skip = second.report.results.find((r) => r.target.env_id === l.id && r.step_id === null && r.staging)!;
      expect(skip.reason).toContain('staged: akismet 2.5.4 goes to staging first; live follows on a run after the soak');
      expect(skip.reason).toContain(why);
      expect(skip.staging).toEqual([expect.objectContaining({ code: 'staged', plugin: 'akismet', version: '2.5.4', soaked: '2.5.3' })]);
    }
    expect(second.stdout).toContain(why);
    expect(decisionsOf(second.report).some((d) => d.code === 'promoted')).toBe(false);

    // The soak of 2.5.4 over: live takes it, pinned, as staged.
    const later = sim.log.length;
    const third = await run(env, yaml, T0 + 48 * HOUR);
    expect(third.code, third.stderr).toBe(0);
    for (const l of stagedLive) expect(runs().get(l.id), l.id).toBe('2.5.4');
    expect(liveWrites(later).map((e) => e.body)).toEqual(stagedLive.map(() => ({ name: 'akismet', update_version: '2.5.4' })));
    expect(decisionsOf(third.report).filter((d) => d.code === 'promoted')).toHaveLength(stagedLive.length);
  });

  it('rollout.security_bypass: live takes the newer, safe version unstaged, the step, the report, the summary and the Markdown naming the bypass', async () => {
    const { sim, env, yaml, runs, liveWrites, stagings, stagedLive } = await soakedThenFlagged('{ staging_first: true, soak: 20h, security_bypass: true }');
    const from = sim.log.length;
    const second = await run(env, yaml, T0 + 24 * HOUR);
    expect(second.code, second.stderr).toBe(0);
    expect(liveWrites(from).map((e) => e.body)).toEqual(stagedLive.map(() => ({ name: 'akismet', update_version: '2.5.4' })));
    // Staging does not stay on the flagged version either: it takes 2.5.4 the same night.
    for (const s of stagings) expect(runs().get(s.id), s.id).toBe('2.5.4');
    for (const l of stagedLive) expect(runs().get(l.id), l.id).toBe('2.5.4');
    const words = 'staging_bypassed: akismet 2.5.4 goes to live unstaged: 2.5.3 soaked on staging is flagged vulnerable (rollout.security_bypass)';
    for (const l of stagedLive) {
      const mine = second.report.results.filter((r) => r.target.env_id === l.id && r.role === undefined);
      const write = mine.find((r) => r.step_id !== null && r.action === 'plugins.update')!;
      expect(write.status).toBe('succeeded');
      expect(write.reason).toContain(words);
      expect(write.staging).toEqual([expect.objectContaining({ code: 'staging_bypassed', plugin: 'akismet', version: '2.5.4', soaked: '2.5.3' })]);
      // Live is not also told it waits for the version it took tonight.
      expect(mine.filter((r) => r.step_id === null && r.staging)).toEqual([]);
    }
    expect(second.stdout).toContain(words);
    expect(second.stdout).toContain(
      `staging first (plugins): staging_bypassed: akismet 2.5.4 on ${stagedLive.length} sites (rollout.security_bypass: false stages it first)`,
    );
    // Staging's run of 2.5.4 is recorded as any staging step's.
    const store = readFileSync(join(env.SITEFLEET_STATE_DIR!, 'staging', `${sim.companyId}.jsonl`), 'utf8');
    const entries = store
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as { env_id: string; version: string; kind: string });
    for (const s of stagings) expect(entries).toContainEqual(expect.objectContaining({ env_id: s.id, version: '2.5.4', kind: 'healthy' }));
    const line = `staging bypassed (plugins): akismet 2.5.4 went to live unstaged on ${stagedLive.length} sites: 2.5.3 soaked on staging is flagged vulnerable (rollout.security_bypass)`;
    expect(second.markdown).toContain(`- ${forMarkdown(line)}`);
  });
});
