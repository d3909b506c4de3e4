import { describe, expect, it } from 'vitest';
import { CORE_VERSIONS } from '../../src/sim/core.js';
import type { Simulator, SimulatorOptions } from '../../src/sim/server.js';
import { useSimulator } from '../helpers/sim.js';
import { runToEnd } from './http.js';

const start = useSimulator();
const real = (options: SimulatorOptions = {}) => start({ profile: 'real', operationDelayMs: 0, operationVisibleAfterMs: 0, createRate: '100/s', ...options });

/** What a finished WP-CLI operation carries in `data` on a `real` simulator. */
async function wp(sim: Simulator, envId: string, command: string): Promise<unknown> {
  const { done } = await runToEnd(sim, 'POST', `/sites/environments/${envId}/run-wp-cli-command`, { wp_command: command });
  expect(done.body).toMatchObject({ status: 200, message: 'environment:run-wp-cli-command completed' });
  return done.body.data;
}

describe('WP-CLI output on the real profile', () => {
  it('the commands fleet maintenance runs print what WP-CLI prints, without a trailing newline', async () => {
    const { sim } = await real();
    const env = [...sim.fleet.environments.values()][0]!;
    expect(env.wordpressVersion).toMatch(/^6\.\d\.\d$/);
    expect(await wp(sim, env.id, 'wp core version')).toEqual({ result: env.wordpressVersion });
    expect(await wp(sim, env.id, 'wp option get siteurl')).toEqual({ result: `https://${env.domains[0]!.name}` });
    expect(await wp(sim, env.id, 'wp cache flush')).toEqual({ result: 'Success: The cache was flushed.' });
    expect(await wp(sim, env.id, 'wp plugin list --status=active --format=count')).toEqual({ result: expect.stringMatching(/^\d{1,2}$/) });
    expect(env.wpCommands).toEqual(['wp core version', 'wp option get siteurl', 'wp cache flush', 'wp plugin list --status=active --format=count']);
  });

  it('is the same for the same environment and command, and runs of whitespace in the command do not matter', async () => {
    const { sim } = await real();
    const [a, b] = [...sim.fleet.environments.values()];
    for (const command of ['wp core version', 'wp plugin list --status=active --format=count']) {
      const once = await wp(sim, a!.id, command);
      expect(await wp(sim, a!.id, command)).toEqual(once);
      expect(await wp(sim, a!.id, `${command.replace(/ /g, '   \t')}  `)).toEqual(once);
    }
    expect(await wp(sim, b!.id, 'wp  option   get siteurl')).toEqual({ result: `https://${b!.domains[0]!.name}` });
    expect(a!.wpCommands).toContain('wp   \tcore   \tversion  '); // recorded as sent
  });

  it('an environment without a domain answers with its service hostname', async () => {
    const { sim } = await real();
    const site = [...sim.fleet.sites.keys()][0]!;
    const { done } = await runToEnd(sim, 'POST', `/sites/${site}/environments/plain`, { display_name: 'bare' });
    const id = done.body.data.idEnv as string;
    expect(await wp(sim, id, 'wp option get siteurl')).toEqual({ result: `https://${id}.hosting.example` });
  });

  it('anything else prints nothing: data null (sources disagree on whether the service returns stdout)', async () => {
    const { sim } = await real();
    const env = [...sim.fleet.environments.values()][0]!;
    expect(await wp(sim, env.id, 'wp plugin update --all')).toBeNull();
    expect(await wp(sim, env.id, 'wp core  update')).toBeNull();
    expect(env.wpCommands).toEqual(['wp plugin update --all', 'wp core  update']);
  });

  // The first sites of a seeded fleet are the same whatever its size, so the first 12 environments
  // stand for every fleet of 12 or more. Themes: the simulator's default (8) and the test helper's (5).
  it.each([8, 5])('with the default seed and %i themes, any fleet of 12 environments runs more than one WordPress version', async (themes) => {
    const { sim } = await real({ sites: 12, themes });
    const first12 = [...sim.fleet.environments.keys()].slice(0, 12);
    expect(first12).toHaveLength(12);
    const versions = new Set<unknown>();
    for (const id of first12) versions.add(((await wp(sim, id, 'wp core version')) as { result: string }).result);
    expect(versions.size).toBeGreaterThan(1);
    for (const v of versions) expect(CORE_VERSIONS).toContain(v);
  });
});
