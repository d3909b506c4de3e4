import { describe, expect, it } from 'vitest';
import { request } from 'undici';
import { runCli } from '../helpers/cli.js';
import { useSimulator } from '../helpers/sim.js';

const start = useSimulator();

async function page(url: string): Promise<{ status: number; text: string; location?: string }> {
  const res = await request(url);
  return { status: res.statusCode, text: await res.body.text(), location: res.headers.location as string | undefined };
}

describe('the simulator serves the fleet’s sites', () => {
  it('each domain’s front page, healthy by default, without a token and outside the API’s log', async () => {
    const { sim } = await start({ rate: '1/min' });
    const domain = [...sim.fleet.domains.values()][0]!.name;
    const url = sim.siteUrl.replace('{{domain}}', domain);
    for (let i = 0; i < 3; i++) expect((await page(url)).status).toBe(200); // no rate window either
    expect(await page(url.slice(0, -1))).toMatchObject({ status: 301, location: `/sites/${domain}/` });
    expect((await page(sim.siteUrl.replace('{{domain}}', 'unknown.example.com'))).status).toBe(404);
    expect(sim.log).toHaveLength(0);
    expect(sim.siteLog.map((e) => e.status)).toEqual([200, 200, 200, 301, 404]);
  });

  it('--break-theme NAME@latest breaks the sites that run that version, with WordPress’s critical error', async () => {
    const { sim } = await start({ seed: 5 });
    const [name, theme] = [...sim.fleet.catalog][0]!;
    const latest = theme.versions.at(-1)!;
    expect(sim.breakTheme(`${name}@latest`)).toBe(`${name}@${latest}`);
    for (const env of sim.fleet.environments.values()) {
      const { status, text } = await page(sim.siteUrl.replace('{{domain}}', env.domains[0]!.name));
      const runs = env.themes.get(name)?.version === latest;
      expect(status).toBe(runs ? 500 : 200);
      expect(text.includes('There has been a critical error on this website.')).toBe(runs);
    }
    expect(() => sim.breakTheme('nosuch@latest')).toThrow(/no theme nosuch in the catalogue/);
  });

  it('`sim --break-theme` with a theme or version it does not have is exit 2', async () => {
    const result = await runCli(['sim', '--size', '2', '--break-theme', 'astra@0.0.0-nope']);
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/--break-theme astra@0\.0\.0-nope: astra has versions/);
  });
});
