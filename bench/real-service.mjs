// Issue 16's measurement: a creation limit apart from the general one, as the real service has.
// Returns { name, figures, target, met }. Times are the simulator's (its request log).
import { join } from 'node:path';
import { readFileSync } from 'node:fs';
import { round, runCli, sitesFor, startSim, writePlaybook } from './lib.mjs';

/**
 * Backups (creating calls), then PHP changes, then WP-CLI commands on the same environments, every
 * task waiting, against the real profile with a creation window a tenth of the general one. The
 * creation limit is not given: the run learns it from 429s, and must not slow everything else to it.
 *
 * The least possible time: the backups at the creation window (the first window's worth at once),
 * then each later task's writes and one poll each at the general window, each task plus one
 * operation's time (its last operation, seen done once visible).
 */
export async function creationLimit(dir) {
  const N = 48;
  const G = 120;
  const C = 12;
  const periodS = 6;
  const opMs = 2000;
  const sim = await startSim(
    [
      '--profile',
      'real',
      '--size',
      String(sitesFor(N)),
      '--themes',
      '4',
      '--rate',
      `${G}/${periodS}s`,
      '--create-rate',
      `${C}/${periodS}s`,
      '--op-delay',
      String(opMs),
      '--op-visible-after',
      '1000',
      '--seed',
      '16',
    ],
    dir,
  );
  try {
    const report = join(dir, 'creation.json');
    const pb =
      `version: 1\nname: creation\nsettings: { rate_limit: ${G}/${periodS}s, concurrency: 8, wait: true }\ntasks:\n` +
      '  - { name: backup, action: backups.create, target: all, with: { tag: "before-{{date}}" } }\n' +
      '  - { name: php, action: php.set_version, target: all, with: { php_version: "8.3" } }\n' +
      '  - { name: cli, action: wp_cli.run, target: all, with: { wp_command: "wp cache flush" } }\n';
    const res = await runCli(['run', writePlaybook(dir, pb, 'creation.yaml'), '--yes', '--report', report, '--state-dir', dir], sim.env);
    const log = sim.log();
    const writes = log.filter((e) => e.method !== 'GET');
    const backups = log.filter((e) => e.endpoint === 'addManualBackup' && e.status !== 429).length;
    const first = Math.min(...writes.map((e) => e.at));
    const last = Math.max(...log.map((e) => e.answered_at));
    const wallMs = last - first;
    const n = backups;
    const periodMs = periodS * 1000;
    const leastMs = (Math.max(0, n - C) / C) * periodMs + opMs + 2 * (((2 * n) / G) * periodMs + opMs);
    const limited = log.filter((e) => e.status === 429);
    const { summary } = JSON.parse(readFileSync(report, 'utf8'));
    return {
      name: `14. a creation limit a tenth of the general one (${n} envs: backups, PHP, WP-CLI; ${G}/${periodS}s, creating ${C}/${periodS}s, unknown to the run)`,
      figures: {
        environments: n,
        wall_ms: Math.round(wallMs),
        least_ms: Math.round(leastMs),
        ratio: round(wallMs / leastMs, 3),
        answered_429: limited.length,
        answered_429_not_creating: limited.filter((e) => e.endpoint !== 'addManualBackup').length,
        succeeded: summary.succeeded,
        total: summary.total,
        exit: res.code,
      },
      target: 'wall ≤ 1.3 × the least possible time; 429s ≤ concurrency (8); every step succeeded',
      met: wallMs / leastMs <= 1.3 && limited.length <= 8 && summary.succeeded === summary.total && summary.total === 3 * n && res.code === 0,
    };
  } finally {
    await sim.stop();
  }
}
