import type { Simulator } from '../../src/sim/server.js';

/** One plugin an environment runs with an update offered, as the simulator holds it. */
export interface OfferedPlugin {
  env: string;
  name: string;
  version: string;
  latest: string;
  /** The version offered is flagged vulnerable: the default policy leaves it alone. */
  vulnerableUpdate: boolean;
}

/** Every plugin update the simulator's fleet offers now (the catalogue's latest differs from the one installed). */
export function offeredPlugins(sim: Simulator): OfferedPlugin[] {
  return [...sim.fleet.environments.values()].flatMap((env) =>
    [...env.plugins].flatMap(([name, p]) => {
      const item = sim.fleet.pluginCatalog.get(name)!;
      const latest = item.versions.at(-1)!;
      return p.version === latest ? [] : [{ env: env.id, name, version: p.version, latest, vulnerableUpdate: item.vulnerable.has(latest) }];
    }),
  );
}

/** `envId plugin` → installed version, as the simulator holds it. */
export function installedPlugins(sim: Simulator): Map<string, string> {
  return new Map([...sim.fleet.environments.values()].flatMap((env) => [...env.plugins].map(([name, p]) => [`${env.id} ${name}`, p.version] as const)));
}

/** The requests the simulator saw to one endpoint (by the endpoint table's name), with `seq` at or after `from`. */
export function requestsTo(sim: Simulator, endpoint: string, from = 0) {
  return sim.log.filter((e) => e.endpoint === endpoint && e.seq >= from);
}

/** Whether an isolation round's write (pinned, one an item) reached the environment after its `n`th restore was asked for. */
export function roundAfterRestore(sim: Simulator, envId: string, n: number): boolean {
  const restore = requestsTo(sim, 'restoreBackup').filter((e) => e.path.split('/')[4] === envId)[n - 1];
  return restore !== undefined && requestsTo(sim, 'updatePlugin', restore.seq).some((e) => e.path.split('/')[4] === envId);
}

/** A playbook of one plugins.update task over every environment. */
export function pluginPlaybook(task: string, settings = '{ rate_limit: 50/s, wait: true }'): string {
  return `version: 1\nname: plugins\nsettings: ${settings}\ntasks:\n  - name: plugins\n    action: plugins.update\n    target: all\n${task}`;
}

/** The plugin whose safe update (latest not flagged vulnerable) is offered, active, on the most live environments. */
export function busiestPlugin(sim: Simulator): { plugin: string; envs: string[] } {
  let best = { plugin: '', envs: [] as string[] };
  for (const [name, item] of sim.fleet.pluginCatalog) {
    const latest = item.versions.at(-1)!;
    if (item.vulnerable.has(latest)) continue;
    const envs = [...sim.fleet.environments.values()]
      .filter((e) => e.displayName === 'live' && e.plugins.get(name)?.status === 'active' && e.plugins.get(name)!.version !== latest)
      .map((e) => e.id);
    if (envs.length > best.envs.length) best = { plugin: name, envs };
  }
  return best;
}

/** A playbook of one guarded plugins.update task of `plugin` on every live environment, with `extra` lines (health, backup, rollout). */
export function guardedPluginNight(sim: Simulator, name: string, plugin: string, extra: string): string {
  return `version: 1
name: ${name}
settings: { rate_limit: 50/s }
tasks:
  - name: update ${plugin}
    action: plugins.update
    target: { environment: live }
    with: { plugins: ${plugin} }
${extra}`;
}

/**
 * `akismet` 5.0.0 on every environment with 5.0.1 offered (or the `versions` given, oldest first), and
 * a staged night of it: staging first with a soak, backup first, checks that restore. Returns the
 * staging environments and their live siblings.
 */
export function stagedAkismet(sim: Simulator, versions = ['5.0.0', '5.0.1']) {
  const name = 'akismet';
  sim.fleet.pluginCatalog.set(name, { name, title: 'Akismet', versions: [...versions], vulnerable: new Set() });
  for (const e of sim.fleet.environments.values())
    e.plugins.set(name, { version: versions[0]!, status: 'active', updateStatus: 'none', autoUpdateType: 'none' });
  const envs = [...sim.fleet.environments.values()];
  const stagings = envs.filter((e) => e.displayName === 'staging');
  const stagedLive = envs.filter((e) => e.displayName === 'live' && stagings.some((s) => s.siteId === e.siteId));
  const health = `    backup_first: true\n    health: { url: "${sim.siteUrl}", attempts: 2, interval: 50ms, on_broken: restore }\n    rollout: { staging_first: true, soak: 20h }\n`;
  return {
    name,
    envs,
    stagings,
    stagedLive,
    yaml: guardedPluginNight(sim, 'staged-plugins', name, health).replace(`  - name: update ${name}\n`, '  - name: plugins\n'),
  };
}
