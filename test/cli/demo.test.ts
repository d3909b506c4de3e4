import { beforeAll, describe, expect, it } from 'vitest';
import { runCli, tempDir } from '../helpers/cli.js';

describe('sitefleet demo', () => {
  // One demo read by both tests: the theme nights and the plugin night are parts of one run. At --speed 10
  // (the simulator's operations, the polls, the cache clears' gap and the health attempts ten times
  // closer: the same runs in the same order) it takes about 12 s on an idle machine instead of 40.
  let result: Awaited<ReturnType<typeof runCli>>;
  // The bound only ends a demo that hangs (a loaded two-core machine takes several times as long).
  // Node's own warnings reach the process's stderr, not the command's: collected while the demo runs.
  const warnings: Error[] = [];
  beforeAll(async () => {
    const onWarning = (w: Error) => warnings.push(w);
    process.on('warning', onWarning);
    try {
      result = await runCli(['demo', '--rate', '2000/s', '--speed', '10'], { SITEFLEET_STATE_DIR: tempDir() });
    } finally {
      process.off('warning', onWarning);
    }
  }, 240_000);

  it('starts its own simulator, plans and runs every example playbook, and prints the summaries', () => {
    expect(result.stderr).toBe('');
    expect(warnings.map((w) => `${w.name}: ${w.message}`)).toEqual([]);
    expect(result.code).toBe(0);
    for (const name of ['theme-updates', 'security-updates', 'plugin-security', 'php-staging', 'denied-ips', 'nightly-backups', 'wp-cli-and-dns'])
      expect(result.stdout).toContain(`== run ${name}.yaml`);
    expect(result.stdout).toMatch(/== plan theme-updates\.yaml/);
    expect(result.stdout.match(/\d+ steps: \d+ ok .* 0 failed, 0 held, 0 unknown/g)).toHaveLength(7);
    // The safe playbook first, on a theme version the simulator breaks: it stops after its canary.
    expect(result.stdout).toMatch(
      /== run safe-theme-updates\.yaml \(the simulator now answers WordPress's critical error on every site running [a-z-]+@[\d.]+\)/,
    );
    expect(result.stdout).toContain('the canary broke its site, so the rollout stopped there');
    expect(result.stdout).toMatch(/the 1 failed site \(1 restore asked for\):\n {2}\S+ \(Theme updates\): restored from backup \d+: healthy again/);
    expect(result.stdout).toContain('the canary was restored from its restore point and is healthy again');
  });

  it(
    'shows a plugin night: release age holds fresh versions, and a plugin that breaks the canary stops the rollout and is undone',
    { timeout: 60_000 },
    async () => {
      expect(result.code).toBe(0);
      const night = result.stdout.slice(result.stdout.indexOf('== run safe-plugin-updates.yaml'), result.stdout.indexOf('== run theme-updates.yaml'));
      expect(night).toMatch(
        /^== run safe-plugin-updates\.yaml \(the simulator now answers a PHP fatal error in wp-content\/plugins\/ on every site running [a-z0-9-]+@[\d.]+\)\n/,
      );
      // The plan read the company plugin listing, and the release age held what the fresh state folder had just seen.
      expect(night).toMatch(/: company \S+, \d+ environments, \d+ themes in the listing, \d+ plugins in the listing\n/);
      // Each item version once, its dates as ages, what lets a held one go sooner said once.
      expect(night).toMatch(
        /^release age \(Plugin updates\): \S+ [\d.]+(, [\d.]+)* → [\d.]+, first seen just now, eligible in 3 days: age_pending, held on \d+ environments?$/m,
      );
      const ages = night.split('\n').filter((l) => l.startsWith('release age'));
      expect(ages.filter((l) => /\d{4}-\d\d-\d\dT/.test(l))).toEqual([]);
      expect(ages.filter((l) => l.includes('lower with.min_release_age'))).toEqual([
        'release age (Plugin updates): age_pending: lower with.min_release_age to take it sooner',
      ]);
      const versions = ages.map((l) => /: (\S+) [\d., ]+→ ([\d.]+),/.exec(l)?.slice(1).join('@')).filter(Boolean);
      expect(new Set(versions).size).toBe(versions.length);
      // The site the plugin broke is named once, though three of its writes failed (two taken back by its restore).
      const failed = night.split('\n').filter((l) => l.startsWith('failed '));
      expect(failed).toHaveLength(1);
      expect(failed[0]).toMatch(
        /^failed \S+ \(Plugin updates\): health: HTTP 500, .* \(and 2 more steps on this site: undone: the environment was put back from backup \d+/,
      );
      expect(night).toMatch(/the 1 failed site \(1 restore asked for\):\n {2}\S+ \(Plugin updates\): restored from backup \d+: healthy again/);
      expect(night).toContain('run stopped: failure budget exceeded in task "Plugin updates": 1 failed, 0 allowed');
      expect(night).toMatch(
        /^ {2}\S+ \(Plugin updates\): restored from backup \d+: healthy again \(what changed on the site since the backup[^)]* is lost\)$/m,
      );
      expect(night).toContain('the canary was restored from its restore point and is healthy again, the others untouched');
    },
  );
});
