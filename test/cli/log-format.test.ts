import { describe, expect, it } from 'vitest';
import { PLAYBOOKS, runCli, simEnv } from '../helpers/cli.js';
import { useSimulator } from '../helpers/sim.js';

const start = useSimulator();

describe('log lines on stderr are for a person unless asked otherwise', () => {
  it('a pipe (not a terminal) gets short text lines, no raw JSON records; --log-format json gives JSON lines', async () => {
    // No company plugin listing: the plan reads each environment's own, and logs a warning saying so.
    const { sim } = await start({ sites: 3, seed: 4, pluginListing: 'absent' });
    const playbook = `${PLAYBOOKS}plugin-updates.yaml`;
    const text = await runCli(['plan', playbook], simEnv(sim));
    expect(text.code, text.stderr).toBe(0);
    expect(text.stderr).toMatch(/^sitefleet: warning: reading each environment's own listing \(kind: plugin, /m);
    expect(text.stderr).not.toMatch(/^\{/m);
    expect(text.stderr).not.toContain('\x1b[K'); // the terminal's line wipe is a terminal's only
    expect(text.stdout).not.toMatch(/"level"/);

    const json = await runCli(['plan', playbook, '--log-format', 'json'], simEnv(sim));
    expect(json.code, json.stderr).toBe(0);
    const records = json.stderr
      .trimEnd()
      .split('\n')
      .map((line) => JSON.parse(line) as { level: number; msg: string });
    expect(records.map((r) => [r.level, r.msg])).toContainEqual([40, "reading each environment's own listing"]);

    const bad = await runCli(['plan', playbook, '--log-format', 'yaml'], simEnv(sim));
    expect(bad.code).toBe(2);
  });
});
