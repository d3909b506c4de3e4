import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { Report } from '../../src/report/report.js';
import type { Simulator } from '../../src/sim/server.js';
import { runCli, simEnv, tempDir, writePlaybook } from '../helpers/cli.js';
import { busiestPlugin, guardedPluginNight, requestsTo } from '../helpers/plugins.js';
import { useSimulator } from '../helpers/sim.js';

const start = useSimulator();

/** Orders each page a shop serves places: the look before the write, after its backup, places this many. */
const PER_VISIT = 12;

async function run(sim: Simulator, yaml: string) {
  const dir = tempDir();
  const reportPath = join(dir, 'r.json');
  const result = await runCli(['run', writePlaybook(yaml, dir), '--yes', '--poll-interval', '50', '--report', reportPath], simEnv(sim));
  return { ...result, reportPath, out: result.stdout + result.stderr, report: JSON.parse(readFileSync(reportPath, 'utf8')) as Report };
}

/** A plugin that breaks every live shop it is updated on; each shop's orders, and the orders placed over the run. */
async function brokenShops(undo: 'items_first' | 'backup', shape?: (sim: Simulator, plugin: string) => void) {
  const { sim } = await start({ sites: 3, pluginsPerEnv: 8, seed: 5, operationDelayMs: 30 });
  const { plugin, envs } = busiestPlugin(sim);
  shape?.(sim, plugin);
  const shops = envs.map((id) => sim.fleet.environments.get(id)!);
  for (const env of shops) sim.openShop(env.domains[0]!.name, PER_VISIT);
  const old = new Map(shops.map((e) => [e.id, e.plugins.get(plugin)!.version]));
  sim.breakPlugin(`${plugin}@latest`);
  const guards = `    backup_first: true\n    health: { url: "${sim.siteUrl}", attempts: 1, interval: 50ms, on_broken: restore, undo: ${undo} }\n    max_failures: 100\n`;
  const { code, out, report, reportPath } = await run(sim, guardedPluginNight(sim, `undo-${undo}`, plugin, guards));
  // Every order a shop took is a page it served healthy and fresh: what it holds now, against what it took.
  const taken = (domain: string) => sim.siteLog.filter((v) => v.domain === domain && v.status === 200 && !v.cached).length * PER_VISIT;
  return { sim, plugin, shops, old, code, out, report, reportPath, taken };
}

describe('health.undo: a plugin that breaks shops', () => {
  it('items_first: put back by its own files through WP-CLI, healthy again, every order kept, no backup restored', async () => {
    const { sim, plugin, shops, old, code, out, report, reportPath, taken } = await brokenShops('items_first');
    expect(code, out).toBe(1);
    expect(shops.length).toBeGreaterThan(0);
    for (const env of shops) {
      const w = report.results.find((r) => r.target.env_id === env.id && r.request?.method === 'PUT')!;
      expect(w, env.id).toMatchObject({ status: 'failed', health: { outcome: 'unhealthy' }, undone: { status: 'succeeded', health: { outcome: 'healthy' } } });
      expect(w.restored).toBeUndefined();
      expect(env.plugins.get(plugin)!.version).toBe(old.get(env.id));
      expect(env.wpCommands).toEqual([`wp plugin install ${plugin} --version=${old.get(env.id)} --force`]);
      // The orders the look before placed after the backup are all there.
      expect(env.orders).toBe(taken(env.domains[0]!.name));
      expect(env.orders).toBeGreaterThanOrEqual(PER_VISIT);
      expect(out).toContain(`put back ${plugin} ${old.get(env.id)} (files only; the site's data kept): healthy again`);
    }
    expect(requestsTo(sim, 'restoreBackup')).toEqual([]);
    // The report reads back against its schema, and says the same.
    const status = await runCli(['status', reportPath], simEnv(sim));
    expect(status.stderr).not.toMatch(/schema/i);
    expect(status.stdout).toContain("(files only; the site's data kept): healthy again");
  });

  it('backup: restored, the orders since the backup lost, and the report says so', async () => {
    const { sim, plugin, shops, old, code, out, report, taken } = await brokenShops('backup');
    expect(code, out).toBe(1);
    for (const env of shops) {
      const w = report.results.find((r) => r.target.env_id === env.id && r.request?.method === 'PUT')!;
      expect(w.undone).toBeUndefined();
      expect(w.restored).toMatchObject({ status: 'succeeded', health: { outcome: 'healthy' } });
      expect(env.plugins.get(plugin)!.version).toBe(old.get(env.id));
      // The look before came after the backup: its orders are gone.
      expect(taken(env.domains[0]!.name) - env.orders!).toBe(PER_VISIT);
      // Said with the backup's own time: what the site did since then is what the restore took away.
      const backup = env.backups.find((b) => b.id === w.restored!.backup_id)!;
      const takenAt = new Date(backup.created_at).toISOString();
      expect(w.restore_point!.taken_at).toBe(takenAt);
      expect(out).toContain(
        `restored from backup ${backup.id}: healthy again (what changed on the site since the backup of ${takenAt.slice(0, 16).replace('T', ' ')} UTC is lost)`,
      );
    }
    expect(requestsTo(sim, 'runWpCliCommand')).toEqual([]);
  });

  it('a halt while its items went back: resume sends the command again, looks, and restores nothing', async () => {
    const { sim, plugin, shops, old, reportPath, report } = await brokenShops('items_first');
    const env = shops[0]!;
    const w = report.results.find((r) => r.target.env_id === env.id && r.request?.method === 'PUT')!;
    // As if the run halted with the command on its way: the site still runs the version that broke it.
    const latest = sim.fleet.pluginCatalog.get(plugin)!.versions.at(-1)!;
    env.plugins.get(plugin)!.version = latest;
    const journalPath = reportPath.replace(/\.json$/, '.journal.jsonl');
    const original = readFileSync(journalPath, 'utf8');
    const last = JSON.parse(
      original
        .split('\n')
        .filter(Boolean)
        .reverse()
        .find((l) => l.includes(`"step":"${w.step_id}"`))!,
    );
    const command = w.undone!.commands[0]!;
    const sending = {
      ...last,
      t: 'update',
      at: Date.now(),
      result: { ...last.result, undone: { status: 'sending', commands: [{ ...command, status: 'sending', operation_id: null }] } },
    };
    writeFileSync(journalPath, `${original}${JSON.stringify(sending)}\n`);
    // The restore command leaves this life to resume: a restore would lose the orders.
    const restore = await runCli(['restore', reportPath, '--yes'], simEnv(sim));
    expect(restore.stdout + restore.stderr, String(restore.code)).toContain('its items were being put back by their own files');
    const sent = env.wpCommands.length;
    const resumed = await runCli(['resume', reportPath, '--yes'], simEnv(sim));
    expect(resumed.stdout + resumed.stderr).toContain(`put back ${plugin} ${old.get(env.id)} (files only; the site's data kept): healthy again`);
    expect(env.wpCommands.slice(sent)).toEqual([command.wp_command]);
    expect(env.plugins.get(plugin)!.version).toBe(old.get(env.id));
    expect(requestsTo(sim, 'restoreBackup')).toEqual([]);
  });

  it('items_first, a version WordPress.org no longer serves: the command fails, and the backup is the way back (the loss said)', async () => {
    const { sim, plugin, shops, old, code, out, report } = await brokenShops('items_first', (sim, plugin) => {
      const item = sim.fleet.pluginCatalog.get(plugin)!;
      const running = new Set([...sim.fleet.environments.values()].map((e) => e.plugins.get(plugin)?.version));
      item.versions = item.versions.filter((v) => !running.has(v));
    });
    expect(code, out).toBe(1);
    for (const env of shops) {
      const w = report.results.find((r) => r.target.env_id === env.id && r.request?.method === 'PUT')!;
      expect(w.undone).toMatchObject({ status: 'failed', commands: [{ status: 'failed' }] });
      expect(w.restored).toMatchObject({ status: 'succeeded', health: { outcome: 'healthy' } });
      expect(env.plugins.get(plugin)!.version).toBe(old.get(env.id));
      expect(out).toContain(`could not put back ${plugin} ${old.get(env.id)}`);
      expect(out).toMatch(/\(what changed on the site since the backup of \d{4}-\d\d-\d\d \d\d:\d\d UTC is lost\)/);
    }
    expect(requestsTo(sim, 'restoreBackup')).toHaveLength(shops.length);
  });
});

describe('validate: health.undo', () => {
  it.each([
    ['plugins.update', 'backup_first: true\n    health: { on_broken: leave, undo: items_first }'],
    ['plugins.update', 'health: { undo: items_first }'],
    ['php.set_version', "with: { php_version: '8.3' }\n    backup_first: true\n    health: { on_broken: restore, undo: items_first }"],
  ])('%s with %s: exit 2, the field named, nothing sent', async (action, guards) => {
    const { sim } = await start({ sites: 2 });
    const file = writePlaybook(`version: 1\nname: p\ntasks:\n  - name: t\n    action: ${action}\n    target: all\n    ${guards}\n`);
    const res = await runCli(['validate', file], simEnv(sim));
    expect(res.code, res.stderr).toBe(2);
    expect(res.stderr).toMatch(/tasks(\[0\]|\.0)\.health\.undo/);
    expect(res.stderr).toMatch(/items_first puts back the items a write replaced before any restore: it needs on_broken: restore or isolate on an item update/);
  });
});
