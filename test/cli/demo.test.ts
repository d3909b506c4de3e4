import { describe, expect, it } from 'vitest';
import { runCli, tempDir } from '../helpers/cli.js';

describe('sitefleet demo', () => {
  it('starts its own simulator, plans and runs every example playbook, and prints the summaries', { timeout: 60_000 }, async () => {
    const result = await runCli(['demo', '--rate', '2000/s'], { SITEFLEET_STATE_DIR: tempDir() });
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    for (const name of ['theme-updates', 'security-updates', 'php-staging', 'denied-ips', 'nightly-backups', 'wp-cli-and-dns'])
      expect(result.stdout).toContain(`== run ${name}.yaml`);
    expect(result.stdout).toMatch(/== plan theme-updates\.yaml/);
    expect(result.stdout.match(/\d+ steps: \d+ ok .* 0 failed, 0 held, 0 unknown/g)).toHaveLength(6);
    // The safe playbook first, on a theme version the simulator breaks: it stops after its canary.
    expect(result.stdout).toMatch(
      /== run safe-theme-updates\.yaml \(the simulator now answers WordPress's critical error on every site running [a-z-]+@[\d.]+\)/,
    );
    expect(result.stdout).toContain('the canary broke its site, so the rollout stopped there');
    expect(result.stdout).toMatch(/the 1 failed step's sites \(1 restore asked for\):\n {2}\S+ \(Theme updates\): restored from backup \d+: healthy again/);
    expect(result.stdout).toContain('the canary was restored from its restore point and is healthy again');
  });
});
