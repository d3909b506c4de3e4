import { describe, expect, it } from 'vitest';
import { runCli, simEnv, tempDir, writePlaybook } from '../helpers/cli.js';
import { useSimulator } from '../helpers/sim.js';

const start = useSimulator();

const THEMES = 'version: 1\nname: t\ntasks:\n  - { name: themes, action: themes.update, target: all, allow_empty: true }\n';
const PLUGINS = 'version: 1\nname: p\ntasks:\n  - { name: plugins, action: plugins.update, target: all, allow_empty: true }\n';

/** The plan's first line: what it read. */
async function header(env: Record<string, string>, text: string): Promise<string> {
  const result = await runCli(['plan', writePlaybook(text, tempDir())], env);
  expect(result.code).toBe(0);
  return result.stdout.split('\n')[0]!;
}

describe("the plan's line on the listings it read", () => {
  it('a theme-only plan says what it always said; a plugin plan adds the plugin listing, or that each environment was read and why', async () => {
    const { sim } = await start({ sites: 3, seed: 4 });
    const themes = sim.fleet.catalog.size;
    const envs = sim.fleet.environments.size;
    expect(await header(simEnv(sim), THEMES)).toMatch(
      new RegExp(`^t \\(.+\\): company ${sim.companyId}, ${envs} environments, ${themes} themes in the listing$`),
    );
    // The listing holds the catalogue, as the theme listing does.
    const plugins = sim.fleet.pluginCatalog.size;
    expect(await header(simEnv(sim), PLUGINS)).toMatch(
      new RegExp(`, ${envs} environments, ${themes} themes in the listing, ${plugins} plugins in the listing$`),
    );
    const absent = (await start({ sites: 3, seed: 4, pluginListing: 'absent' })).sim;
    expect(await header(simEnv(absent), PLUGINS)).toMatch(
      /themes in the listing, \d+ plugins read from each environment's own listing \(the service does not serve the company plugin listing \(plugins: 404\)\)$/,
    );
  });
});
