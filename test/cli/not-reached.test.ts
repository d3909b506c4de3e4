import { describe, expect, it } from 'vitest';
import { EXIT } from '../../src/errors.js';
import { PLAYBOOKS, runCli, simEnv } from '../helpers/cli.js';
import { useSimulator } from '../helpers/sim.js';

const start = useSimulator();
const playbook = `${PLAYBOOKS}theme-updates.yaml`;

/** One line on stderr that says what to check and that nothing was sent; exit 6, never 1 ("some steps failed"). */
function expectNotReached(result: { code: number | null; stderr: string }, check: RegExp): void {
  expect(result.code).toBe(EXIT.notReached);
  const lines = result.stderr.trimEnd().split('\n');
  expect(lines).toHaveLength(1);
  expect(lines[0]).toMatch(check);
  expect(lines[0]).toMatch(/; nothing was sent$/);
}

describe('a service, base URL or company not reached: one line with what to check, exit 6', () => {
  it('a wrong --company: run and the reading commands say to check the company, and send nothing', async () => {
    const { sim } = await start({ sites: 3 });
    const company = '00000000-0000-4000-8000-000000000000';
    for (const args of [['run', playbook, '--yes'], ['plan', playbook], ['inventory'], ['backups']]) {
      const result = await runCli([...args, '--company', company], simEnv(sim));
      expectNotReached(result, new RegExp(`answered 404: Company ${company} not found\\. Check the company ${company} \\(--company`));
    }
    expect(sim.log.filter((e) => e.method !== 'GET')).toEqual([]);
  });

  it('a base URL nothing answers at, and one under which the API is not: exit 6 naming the base URL', async () => {
    const { sim } = await start({ sites: 3 });
    const refused = await runCli(['plan', playbook], { ...simEnv(sim), SITEFLEET_BASE_URL: 'http://127.0.0.1:1' });
    expectNotReached(
      refused,
      /ECONNREFUSED.*Check the base URL \(--base-url or SITEFLEET_BASE_URL\) and the network: the service does not answer at http:\/\/127\.0\.0\.1:1;/,
    );
    const wrongPath = await runCli(['run', playbook, '--yes'], { ...simEnv(sim), SITEFLEET_BASE_URL: `${sim.baseUrl}/wrong` });
    expectNotReached(wrongPath, /answered 404.*and the base URL \(--base-url or SITEFLEET_BASE_URL\)/);
    expect(sim.log.filter((e) => e.method !== 'GET')).toEqual([]);
  });
});
