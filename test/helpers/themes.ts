import type { Simulator } from '../../src/sim/server.js';

/** The theme with an update available on the most live environments, and those environments. */
export function busiestTheme(sim: Simulator): { theme: string; envs: string[] } {
  let best = { theme: '', envs: [] as string[] };
  for (const [name, theme] of sim.fleet.catalog) {
    const envs = [...sim.fleet.environments.values()]
      .filter((e) => e.displayName === 'live' && e.themes.has(name) && e.themes.get(name)!.version !== theme.versions.at(-1))
      .map((e) => e.id);
    if (envs.length > best.envs.length) best = { theme: name, envs };
  }
  return best;
}
