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

/** A theme catalogue for a test: each theme's versions, oldest first, and those flagged vulnerable. */
export type Catalog = Record<string, { versions: string[]; vulnerable: string[] }>;

/**
 * Replaces the simulator's themes: environment i gets three catalogue themes in turn (all of them when
 * there are three or fewer), each at its oldest version.
 */
export function shapeFleet(sim: Simulator, catalog: Catalog): void {
  sim.fleet.catalog.clear();
  for (const [name, { versions, vulnerable }] of Object.entries(catalog))
    sim.fleet.catalog.set(name, { name, title: name, description: `${name} theme`, versions: [...versions], vulnerable: new Set(vulnerable) });
  const names = Object.keys(catalog);
  [...sim.fleet.environments.values()].forEach((env, i) => {
    env.themes.clear();
    for (let k = 0; k < Math.min(3, names.length); k++) {
      const name = names[(i + k) % names.length]!;
      env.themes.set(name, { version: catalog[name]!.versions[0]!, status: k === 0 ? 'active' : 'inactive', updateStatus: 'none', autoUpdateType: 'none' });
    }
  });
}

/** `envId theme` → installed version, as the simulator holds it. */
export function installed(sim: Simulator): Map<string, string> {
  return new Map([...sim.fleet.environments.values()].flatMap((env) => [...env.themes].map(([name, t]) => [`${env.id} ${name}`, t.version] as const)));
}

/**
 * A fleet with no plugin installed and every environment on the newest WordPress: a test of themes
 * alone, whose counts a plugin's or WordPress's exposure would change.
 */
export function withoutPlugins(sim: Simulator): void {
  sim.fleet.pluginCatalog.clear();
  const newest = sim.fleet.core.releases.at(-1)!;
  for (const env of sim.fleet.environments.values()) {
    env.plugins.clear();
    if (env.wordpressVersion !== null) env.wordpressVersion = newest;
  }
}
