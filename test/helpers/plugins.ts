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
