import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { Report } from '../../src/report/report.js';
import type { StepResult } from '../../src/run/types.js';
import { databaseUpdateRequired } from '../../src/sim/after-update.js';
import type { Simulator } from '../../src/sim/server.js';
import { runCli, simEnv, tempDir, writePlaybook } from '../helpers/cli.js';
import { useSimulator } from '../helpers/sim.js';

const start = useSimulator();
/**
 * Operations end at once here (operationDelayMs: 0): polled soon, not after the CLI's 1 s first wait. Where a site
 * breaks, its restore's cache clear follows the write's at once: clears without the vendor's gap (not what is tested).
 */
const FAST = ['--poll-interval', '20'];

const playbook = (task: string, action = 'core.update') =>
  `version: 1\nname: core\nsettings: { rate_limit: 50/s }\ntasks:\n  - name: wp\n    action: ${action}\n    target: { environment: live }\n${task}`;

async function night(sim: Simulator, text: string) {
  const dir = tempDir();
  const reportPath = join(dir, 'report.json');
  const result = await runCli(['run', writePlaybook(text, dir), '--yes', '--report', reportPath, ...FAST], { ...simEnv(sim), SITEFLEET_STATE_DIR: dir });
  return { ...result, reportPath, dir, report: JSON.parse(readFileSync(reportPath, 'utf8')) as Report };
}

const live = (sim: Simulator) => [...sim.fleet.environments.values()].filter((e) => e.displayName === 'live');
const branch = (v: string) => v.split('.').slice(0, 2).join('.');

describe("WordPress's database step after a core write", () => {
  it('a core night: every environment that moved across an x.y release has its database step done, and none says "Database update required"', async () => {
    const { sim } = await start({ sites: 8, seed: 3, operationDelayMs: 0 });
    const across = live(sim).filter((e) => branch(e.wordpressVersion!) !== '6.7');
    expect(across.length).toBeGreaterThan(0);
    const before = sim.log.length;
    const { code, report, stdout } = await night(sim, playbook('    with: { max_bump: major }\n'));
    expect(code).toBe(0);
    const writes = report.results.filter((r) => r.step_id);
    expect(writes.length).toBeGreaterThanOrEqual(across.length);
    expect(stdout).toContain(`database (wp): wp core update-db: ${writes.length} succeeded\n`);
    for (const r of writes)
      expect(r).toMatchObject({
        status: 'succeeded',
        database: [{ command: 'wp core update-db', after: 'update', status: 'succeeded', operation_id: expect.any(String) }],
      });
    expect(live(sim).filter((e) => databaseUpdateRequired(e))).toEqual([]);
    const shown = await Promise.all(
      live(sim)
        .filter((e) => e.domains.length > 0)
        .map(async (e) =>
          (await (await fetch(`${sim.siteUrl.replace('{{domain}}', e.domains[0]!.name)}wp-admin/`)).text()).includes('Database update required'),
        ),
    );
    expect(shown.filter(Boolean)).toEqual([]);
    for (const e of live(sim)) expect(e.wpCommands.filter((c) => c === 'wp core update-db').length).toBe(writes.some((r) => r.target.env_id === e.id) ? 1 : 0);
    // One more WP-CLI call per write: its database step.
    expect(sim.log.slice(before).filter((c) => c.endpoint === 'runWpCliCommand')).toHaveLength(2 * writes.length);
  });

  it('a database step that fails: no write is reported succeeded; each is held database_not_updated, counted, the site still saying so', async () => {
    const { sim } = await start({ sites: 4, seed: 3, operationDelayMs: 0, coreUpdateDbFails: true });
    const { code, report, stdout } = await night(sim, playbook('    with: { max_bump: major }\n'));
    expect(code).not.toBe(0);
    const writes = report.results.filter((r) => r.step_id);
    expect(writes.length).toBeGreaterThan(0);
    for (const r of writes) {
      expect(r.status).toBe('held');
      expect(r.held).toMatchObject({ code: 'database_not_updated', counts_against_budget: true });
      expect(r.database).toEqual([expect.objectContaining({ command: 'wp core update-db', status: 'failed' })]);
      expect(r.reason).toMatch(/^database_not_updated: the write moved the site/);
    }
    const moved = writes.filter(
      (r) => branch(r.runs![0]!.version) !== branch(sim.fleet.environments.get(r.target.env_id!)!.wordpressDb ?? r.runs![0]!.version),
    );
    expect(moved.length).toBeGreaterThan(0);
    expect(moved.every((r) => databaseUpdateRequired(sim.fleet.environments.get(r.target.env_id!)!))).toBe(true);
    // Its wp-admin says so, as WordPress's does.
    const env = sim.fleet.environments.get(moved[0]!.target.env_id!)!;
    const admin = await fetch(`${sim.siteUrl.replace('{{domain}}', env.domains[0]!.name)}wp-admin/`);
    expect(await admin.text()).toContain('<h1>Database update required</h1>');
    expect(stdout).toContain(`database (wp): wp core update-db: ${writes.length} failed (held database_not_updated)\n`);
  });

  it('a restore that moved WordPress back runs its database step too, after the restore, the write staying failed', async () => {
    const { sim } = await start({ sites: 6, seed: 3, operationDelayMs: 0, breakCore: ['6.7.2'], clearCacheGapMs: 0 });
    const task = `    backup_first: true\n    health: { url: "${sim.siteUrl}", attempts: 2, interval: 50ms, on_broken: restore }\n    max_failures: 0\n    rollout: { canary: 1, waves: ["100%"] }\n`;
    const { report } = await night(sim, playbook(task));
    const canary = report.results.find((r) => r.step_id && !r.step_id.endsWith(':backup') && r.status === 'failed')!;
    expect(canary).toMatchObject({ restored: { status: 'succeeded' } });
    expect(canary.database!.map((d) => [d.command, d.after, d.status])).toEqual([
      ['wp core update-db', 'update', 'succeeded'],
      ['wp core update-db', 'restore', 'succeeded'],
    ]);
    expect(databaseUpdateRequired(sim.fleet.environments.get(canary.target.env_id!)!)).toBe(false);
  });
});

describe('the database step after `sitefleet restore`', () => {
  it('a core write left broken, restored the morning after: the restore runs its database step and records it, as the run does after its own', async () => {
    const { sim } = await start({ sites: 6, seed: 3, operationDelayMs: 0, breakCore: ['6.7.2'], clearCacheGapMs: 0 });
    const task = `    backup_first: true\n    health: { url: "${sim.siteUrl}", attempts: 2, interval: 50ms, on_broken: leave }\n    max_failures: 0\n    rollout: { canary: 1, waves: ["100%"] }\n`;
    const { report, reportPath, dir } = await night(sim, playbook(task));
    const canary = report.results.find((r) => r.step_id && !r.step_id.endsWith(':backup') && r.status === 'failed')!;
    expect(canary.restored).toBeUndefined();
    const env = sim.fleet.environments.get(canary.target.env_id!)!;
    const before = env.wpCommands.length;
    const restored = await runCli(['restore', reportPath, '--yes', ...FAST], { ...simEnv(sim), SITEFLEET_STATE_DIR: dir });
    expect(restored.code, restored.stdout + restored.stderr).toBe(0);
    const after = (JSON.parse(readFileSync(reportPath, 'utf8')) as Report).results.find((r) => r.step_id === canary.step_id)!;
    expect(after).toMatchObject({ status: 'failed', restored: { status: 'succeeded' } });
    expect(after.database!.map((d) => [d.command, d.after, d.status])).toEqual([
      ['wp core update-db', 'update', 'succeeded'],
      ['wp core update-db', 'restore', 'succeeded'],
    ]);
    // Sent after the restore, to the environment restored.
    expect(env.wpCommands.slice(before)).toEqual(['wp core update-db']);
    const restoredAt = sim.log.findIndex((e) => e.endpoint === 'restoreBackup');
    expect(sim.log.findIndex((e, i) => i > restoredAt && e.endpoint === 'runWpCliCommand' && e.path.includes(env.id))).toBeGreaterThan(restoredAt);
  });
});

describe('with.after_update: an item’s own step after its update', () => {
  it('plugins.update with after_update: [woocommerce] runs `wp wc update` where a write updated WooCommerce, and only there', async () => {
    const { sim } = await start({ sites: 6, seed: 3, operationDelayMs: 0 });
    // Two shops behind on WooCommerce, the other sites without it.
    const versions = sim.fleet.pluginCatalog.get('woocommerce')!.versions;
    for (const e of live(sim)) e.plugins.delete('woocommerce');
    const shops = live(sim).slice(0, 2);
    for (const e of shops) e.plugins.set('woocommerce', { version: versions[0]!, status: 'active', updateStatus: 'none', autoUpdateType: 'none' });
    const { code, report } = await night(sim, playbook('    with: { plugins: [woocommerce, jetpack], after_update: [woocommerce] }\n', 'plugins.update'));
    expect(code).toBe(0);
    const writes = report.results.filter((r) => r.step_id);
    for (const r of writes) {
      const shop = shops.some((e) => e.id === r.target.env_id);
      expect(r.database ?? [], r.target.env_id).toEqual(
        shop ? [expect.objectContaining({ command: 'wp wc update', after: 'update', status: 'succeeded' })] : [],
      );
    }
    for (const e of live(sim)) expect(e.wpCommands.filter((c) => c === 'wp wc update').length).toBe(shops.includes(e) ? 1 : 0);
  });

  it('a slug outside the fixed list is refused by the playbook, naming the field', async () => {
    const { sim } = await start({ sites: 2, seed: 3 });
    const res = await runCli(['run', writePlaybook(playbook('    with: { after_update: [jetpack] }\n', 'plugins.update')), '--yes'], simEnv(sim));
    expect(res.code).toBe(2);
    expect(res.stderr).toMatch(/tasks\.0\.with\.after_update\.0: must be one of "woocommerce"/);
    expect(sim.log.filter((c) => c.method !== 'GET')).toEqual([]);
  });
});

describe('the database step, resumed', () => {
  it('a run that died as the database step was journaled sending: resume sends it again (safe to repeat) and the write ends succeeded', async () => {
    const { sim } = await start({ sites: 4, seed: 3, operationDelayMs: 0 });
    const dir = tempDir();
    const report = join(dir, 'r.json');
    const journal = join(dir, 'r.journal.jsonl');
    const env = { ...simEnv(sim), SITEFLEET_STATE_DIR: dir };
    expect((await runCli(['run', writePlaybook(playbook('    with: { max_bump: major }\n'), dir), '--yes', '--report', report, ...FAST], env)).code).toBe(0);
    // As if killed right after the first database step was journaled `sending`: every later record lost.
    const lines = readFileSync(journal, 'utf8').trim().split('\n');
    const cut = lines.findIndex((l) => (JSON.parse(l) as { result?: StepResult }).result?.database?.[0]?.status === 'sending');
    expect(cut).toBeGreaterThan(0);
    const stepId = (JSON.parse(lines[cut]!) as { step: string }).step;
    writeFileSync(journal, `${lines.slice(0, cut + 1).join('\n')}\n`);
    const resumed = await runCli(['resume', report, '--yes', ...FAST], env);
    expect(resumed.code).toBe(0);
    const step = (JSON.parse(readFileSync(report, 'utf8')) as Report).results.find((r) => r.step_id === stepId)!;
    expect(step).toMatchObject({ status: 'succeeded', database: [{ command: 'wp core update-db', after: 'update', status: 'succeeded' }] });
    const moved = sim.fleet.environments.get(step.target.env_id!)!;
    expect(moved.wpCommands.filter((c) => c === 'wp core update-db')).toHaveLength(2);
    expect(databaseUpdateRequired(moved)).toBe(false);
  });
});

describe('the database step after a restore, resumed', () => {
  const guardedCore = (sim: Simulator) =>
    playbook(
      `    backup_first: true\n    health: { url: "${sim.siteUrl}", attempts: 2, interval: 50ms, on_broken: restore }\n    max_failures: 0\n    rollout: { canary: 1, waves: ["100%"] }\n`,
    );

  /** A core night whose canary broke and was restored; its journal cut right after the first record `cut` matches (every later one lost). */
  async function cutNight(cut: (r: StepResult) => boolean) {
    const { sim } = await start({ sites: 6, seed: 3, operationDelayMs: 0, breakCore: ['6.7.2'], clearCacheGapMs: 0 });
    const { report, reportPath, dir } = await night(sim, guardedCore(sim));
    const journal = reportPath.replace(/\.json$/, '.journal.jsonl');
    const lines = readFileSync(journal, 'utf8').trim().split('\n');
    const at = lines.findIndex((l) => {
      const result = (JSON.parse(l) as { result?: StepResult }).result;
      return result !== undefined && cut(result);
    });
    expect(at).toBeGreaterThan(0);
    const stepId = (JSON.parse(lines[at]!) as { step: string }).step;
    writeFileSync(journal, `${lines.slice(0, at + 1).join('\n')}\n`);
    const canary = report.results.find((r) => r.step_id === stepId)!;
    const env = sim.fleet.environments.get(canary.target.env_id!)!;
    return { sim, reportPath, dir, stepId, env, cutRecord: JSON.parse(lines[at]!) as { result: StepResult }, before: env.wpCommands.length };
  }

  async function resume(sim: Simulator, reportPath: string, dir: string, stepId: string) {
    const resumed = await runCli(['resume', reportPath, '--yes', ...FAST], { ...simEnv(sim), SITEFLEET_STATE_DIR: dir });
    expect(resumed.code, resumed.stdout + resumed.stderr).not.toBe(2);
    return (JSON.parse(readFileSync(reportPath, 'utf8')) as Report).results.find((r) => r.step_id === stepId)!;
  }

  it('a restore a resume follows to its end is followed by its database step', async () => {
    const { sim, reportPath, dir, stepId, env, before } = await cutNight((r) => r.restored?.status === 'accepted');
    const step = await resume(sim, reportPath, dir, stepId);
    expect(step).toMatchObject({ status: 'failed', restored: { status: 'succeeded' } });
    expect(step.database!.filter((d) => d.after === 'restore').map((d) => d.status)).toEqual(['succeeded']);
    expect(env.wpCommands.slice(before)).toEqual(['wp core update-db']);
  });

  it('a database step after a restore, cut while sending, is sent again and the health record the restore’s look wrote stays', async () => {
    const { sim, reportPath, dir, stepId, env, before, cutRecord } = await cutNight(
      (r) => r.database?.some((d) => d.after === 'restore' && d.status === 'sending') === true,
    );
    const step = await resume(sim, reportPath, dir, stepId);
    expect(step).toMatchObject({ status: 'failed', restored: { status: 'succeeded', health: { outcome: 'healthy' } } });
    expect(step.health).toEqual(cutRecord.result.health);
    expect(step.database!.filter((d) => d.after === 'restore').map((d) => d.status)).toEqual(['succeeded']);
    expect(env.wpCommands.slice(before)).toEqual(['wp core update-db']);
  });
});

describe('the database step after a group restore (rollout.together)', () => {
  it('a core write looked at with its themes write, the site broken: the group restored, then WordPress’s database step', async () => {
    const { sim } = await start({ sites: 4, seed: 3, operationDelayMs: 0, breakCore: ['6.7.2'], clearCacheGapMs: 0 });
    const text =
      `version: 1\nname: n\nsettings: { rate_limit: 50/s }\ntasks:\n` +
      `  - name: themes\n    action: themes.update\n    target: { environment: live }\n    backup_first: true\n` +
      `    health: { url: "${sim.siteUrl}", attempts: 2, interval: 50ms, on_broken: restore }\n` +
      `  - name: wp\n    action: core.update\n    target: { environment: live }\n    rollout: { together: themes }\n`;
    const { report } = await night(sim, text);
    const themed = new Set(report.results.filter((r) => r.step_id && r.task === 'themes' && r.role !== 'backup').map((r) => r.target.env_id));
    const core = report.results.filter((r) => r.step_id && r.task === 'wp' && r.role !== 'backup' && themed.has(r.target.env_id));
    expect(core.length).toBeGreaterThan(0);
    for (const r of core) {
      expect(r.status, r.target.env_id).toBe('failed');
      expect(
        r.database!.map((d) => [d.after, d.status]),
        r.target.env_id,
      ).toEqual([
        ['update', 'succeeded'],
        ['restore', 'succeeded'],
      ]);
    }
  });
});

describe('the database step in a group (rollout.together)', () => {
  it('a core write looked at with its themes write: the group is looked at, then a write whose database step failed is held', async () => {
    const { sim } = await start({ sites: 8, seed: 3, operationDelayMs: 0, coreUpdateDbFails: true });
    const text =
      `version: 1\nname: n\nsettings: { rate_limit: 50/s }\ntasks:\n` +
      `  - name: themes\n    action: themes.update\n    target: { environment: live }\n    backup_first: true\n` +
      `    health: { url: "${sim.siteUrl}", attempts: 2, interval: 50ms, on_broken: restore }\n` +
      `  - name: wp\n    action: core.update\n    target: { environment: live }\n    with: { max_bump: major }\n    rollout: { together: themes }\n`;
    const { report } = await night(sim, text);
    const core = report.results.filter((r) => r.step_id && r.task === 'wp' && r.role !== 'backup');
    const themed = new Set(report.results.filter((r) => r.step_id && r.task === 'themes' && r.role !== 'backup').map((r) => r.target.env_id));
    expect(core.filter((r) => themed.has(r.target.env_id)).length).toBeGreaterThan(0);
    for (const r of core) {
      expect(r.status, r.target.env_id).toBe('held');
      expect(r.held?.code).toBe('database_not_updated');
      expect(r.health?.outcome, r.target.env_id).toBe('healthy');
    }
  });
});
