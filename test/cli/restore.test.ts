import { ENDPOINTS } from '../../src/api/endpoints.js';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { Report, ReportResult } from '../../src/report/report.js';
import type { Simulator } from '../../src/sim/server.js';
import { runCli, simEnv, startCli, tempDir } from '../helpers/cli.js';
import { useSimulator, waitFor } from '../helpers/sim.js';
import { busiestTheme } from '../helpers/themes.js';

const start = useSimulator();

/** The CLI's default 120 calls a minute would space this fleet's calls 0.5 s apart; the simulator sets no limit. */
function playbook(sim: Simulator, theme: string, onBroken = 'restore', settings = 'settings: { rate_limit: 50/s }\n'): string {
  const file = join(tempDir(), 'safe.yaml');
  writeFileSync(
    file,
    `version: 1
name: safe
${settings}tasks:
  - name: update ${theme}
    action: themes.update
    target: { environment: live, theme: ${theme} }
    with: { themes: ${theme}, skip_vulnerable_updates: false }
    backup_first: true
    health: { url: "${sim.siteUrl}", attempts: 2, interval: 50ms, on_broken: ${onBroken} }
    max_failures: 0
    rollout: { canary: 1, waves: ["50%", "100%"] }
`,
  );
  return file;
}

async function run(
  sim: Simulator,
  file: string,
  env: Record<string, string> = {},
): Promise<{ code: number | null; stdout: string; report: Report; path: string }> {
  const path = join(tempDir(), 'r.json');
  const ci = ['--junit', path.replace(/\.json$/, '.xml'), '--summary-md', path.replace(/\.json$/, '.md')];
  const result = await runCli(['run', file, '--yes', '--poll-interval', '50', '--report', path, ...ci], { ...simEnv(sim), ...env });
  return { code: result.code, stdout: result.stdout + result.stderr, report: JSON.parse(readFileSync(path, 'utf8')) as Report, path };
}

const failedWrite = (report: Report): ReportResult => report.results.find((r) => r.status === 'failed' && r.role !== 'backup')!;
const restores = (sim: Simulator) => sim.log.filter((e) => e.endpoint === 'restoreBackup');

/** A rollout left as it broke (on_broken: leave): the canary failed, with its restore point. */
async function brokenRun(profile: 'spec' | 'real' = 'spec') {
  const { sim } = await start({ sites: 16, themes: 4, seed: 3, profile, operationDelayMs: 100, operationVisibleAfterMs: 0, operationPolls: { hidden: 1 } });
  const { theme } = busiestTheme(sim);
  sim.breakTheme(`${theme}@latest`);
  const ran = await run(sim, playbook(sim, theme, 'leave'));
  expect(ran.code).toBe(3);
  const canary = failedWrite(ran.report);
  return { sim, theme, ...ran, canary, env: sim.fleet.environments.get(canary.target.env_id!)! };
}

describe('health.on_broken: restore', () => {
  it.each(['spec', 'real'] as const)(
    'a canary that broke its site is restored from the run’s own restore point and is healthy again (%s profile)',
    async (profile) => {
      const { sim } = await start({ sites: 16, themes: 4, seed: 3, profile, operationDelayMs: 100, operationVisibleAfterMs: 0, operationPolls: { hidden: 1 } });
      const { theme } = busiestTheme(sim);
      sim.breakTheme(`${theme}@latest`);
      const { code, stdout, report, path } = await run(sim, playbook(sim, theme), { GITHUB_ACTIONS: 'true' });
      // The step stays failed: the change broke the site, and the rollout stopped there as before.
      expect(code).toBe(3);
      const canary = failedWrite(report);
      const env = sim.fleet.environments.get(canary.target.env_id!)!;
      const backup = env.backups.find((b) => b.note === canary.restore_point!.tag)!;
      expect(canary).toMatchObject({
        status: 'failed',
        health: { outcome: 'unhealthy' },
        restored: { backup_id: backup.id, status: 'succeeded', operation_id: expect.any(String) as unknown, health: { outcome: 'healthy' } },
      });
      // Exactly one restore, of the backup this run took, to the canary's environment.
      expect(restores(sim)).toHaveLength(1);
      expect(restores(sim)[0]).toMatchObject({ path: `/v2/sites/environments/${env.id}/backups/restore`, body: { backup_id: backup.id }, status: 202 });
      // The theme is back at the version it had, and the site answers.
      expect(env.themes.get(theme)!.version).not.toBe(sim.fleet.catalog.get(theme)!.versions.at(-1));
      expect(stdout).toContain(`restored from backup ${backup.id}: healthy again`);
      // Every sink says so: JUnit, Markdown, the annotation.
      expect(readFileSync(path.replace(/\.json$/, '.xml'), 'utf8')).toContain(`restored from backup ${backup.id}: healthy again`);
      expect(readFileSync(path.replace(/\.json$/, '.md'), 'utf8')).toContain(`restored from backup ${backup.id}: healthy again`);
      expect(stdout).toMatch(new RegExp(`^::error .*; restored from backup ${backup.id}: healthy again`, 'm'));
    },
  );

  it('plan shows the guard and what a restore loses', async () => {
    const { sim } = await start({ sites: 4, themes: 4, seed: 3 });
    const { theme } = busiestTheme(sim);
    const res = await runCli(['plan', playbook(sim, theme)], simEnv(sim));
    expect(res.code).toBe(0);
    expect(res.stdout).toContain('backup, health, on broken: restore');
    expect(res.stdout).toMatch(/restores a site its write broke: .*orders, comments and form entries since then are lost/);
  });

  it('leave (the default) sends no restore; a site broken before its write is never restored', async () => {
    const { sim } = await start({ sites: 16, themes: 4, seed: 3, operationDelayMs: 100 });
    const { theme, envs } = busiestTheme(sim);
    sim.breakTheme(`${theme}@latest`);
    const left = await run(sim, playbook(sim, theme, 'leave'));
    expect(left.code).toBe(3);
    expect(failedWrite(left.report).restored).toBeUndefined();
    expect(restores(sim)).toHaveLength(0);

    // Every candidate broken before, and written to all the same (when_broken_before: update): nothing is blamed on the writes, and nothing is restored.
    const second = await start({ sites: 16, themes: 4, seed: 3, operationDelayMs: 100 });
    for (const id of envs) for (const d of second.sim.fleet.environments.get(id)!.domains) second.sim.breakSite(d.name);
    const before = await run(second.sim, playbook(second.sim, theme, 'restore, when_broken_before: update'));
    expect(second.sim.log.filter((e) => e.endpoint === 'bulkUpdateThemes').length).toBeGreaterThan(0);
    expect(before.report.results.filter((r) => r.health?.outcome === 'unhealthy before').length).toBeGreaterThan(0);
    expect(restores(second.sim)).toHaveLength(0);
  });

  it('a restore the service does not take is reported as not restored, never sent twice, and the exit code says the run failed', async () => {
    const { sim } = await start({ sites: 16, themes: 4, seed: 3, operationDelayMs: 100 });
    const { theme } = busiestTheme(sim);
    sim.breakTheme(`${theme}@latest`);
    sim.setFaults({ 500: 1 }, { only: ['restoreBackup'] });
    const { code, stdout, report } = await run(sim, playbook(sim, theme));
    expect(code).toBe(3);
    const canary = failedWrite(report);
    expect(canary.restored).toMatchObject({ status: expect.stringMatching(/^(failed|unknown)$/) as unknown, operation_id: null });
    // A 500 to a restore may have been applied: it is not sent again.
    expect(restores(sim)).toHaveLength(1);
    expect(stdout).toMatch(/could not restore: /);
  });

  it('a playbook asking for restore without backup_first is refused: exit 2, one line naming the field', async () => {
    const { sim } = await start({ sites: 2 });
    const file = join(tempDir(), 'p.yaml');
    writeFileSync(file, `version: 1\nname: p\ntasks:\n  - name: t\n    action: themes.update\n    target: all\n    health: { on_broken: restore }\n`);
    const res = await runCli(['validate', file], simEnv(sim));
    expect(res.code).toBe(2);
    expect(res.stderr).toMatch(/p\.yaml:7:\d+: tasks\[0\]\.health\.on_broken|tasks\.0\.health\.on_broken/);
    expect(res.stderr).toMatch(/restore needs backup_first: true/);
  });
});

describe('sitefleet restore REPORT: the morning after', () => {
  const writesSent = (sim: Simulator) => sim.log.filter((e) => e.method !== 'GET').length;

  it.each(['spec', 'real'] as const)(
    'restores exactly the failed steps’ restore points; its dry run sends nothing; a second call sends nothing (%s profile)',
    async (profile) => {
      const { sim, path, canary, env, theme } = await brokenRun(profile);
      const sentBefore = writesSent(sim);
      const dry = await runCli(['restore', path, '--dry-run'], simEnv(sim));
      expect(dry.code, dry.stdout + dry.stderr).toBe(0);
      expect(dry.stdout).toContain('would restore: 1 site (dry run: nothing is sent)');
      expect(dry.stdout).toMatch(new RegExp(`backup ${canary.restore_point!.backup_id}, tag ${canary.restore_point!.tag}, taken \\S+ ago`));
      expect(writesSent(sim)).toBe(sentBefore);

      const refused = await runCli(['restore', path], simEnv(sim));
      expect(refused.code).toBe(2); // not a terminal, no --yes: nothing sent
      expect(writesSent(sim)).toBe(sentBefore);

      const done = await runCli(['restore', path, '--yes', '--poll-interval', '50'], simEnv(sim));
      expect(done.code).toBe(0);
      expect(restores(sim)).toHaveLength(1);
      expect(restores(sim)[0]).toMatchObject({
        path: `/v2/sites/environments/${env.id}/backups/restore`,
        body: { backup_id: canary.restore_point!.backup_id },
      });
      expect(env.themes.get(theme)!.version).not.toBe(sim.fleet.catalog.get(theme)!.versions.at(-1));
      const report = JSON.parse(readFileSync(path, 'utf8')) as Report;
      expect(failedWrite(report).restored).toMatchObject({ status: 'succeeded', health: { outcome: 'healthy' } });
      // The run's own story stands: it stopped on its budget, and its resume still stops at the next failure.
      expect(report.stopped?.kind).toBe('budget');
      expect(done.stdout).toMatch(/sitefleet resume \S+ --max-failures 1/);
      expect(done.stdout).toContain(`restored from backup ${canary.restore_point!.backup_id}: healthy again`);

      const again = await runCli(['restore', path, '--yes'], simEnv(sim));
      expect(again.code).toBe(0);
      expect(again.stdout).toContain('nothing to restore');
      expect(restores(sim)).toHaveLength(1);
    },
  );

  it('a journal whose backup id was changed to another backup restores nothing; a restore journaled as being sent is never sent again', async () => {
    const { sim, path, canary, env } = await brokenRun();
    const older = env.backups.find((b) => b.id !== canary.restore_point!.backup_id)!;
    const journalPath = path.replace(/\.json$/, '.journal.jsonl');
    const original = readFileSync(journalPath, 'utf8');
    const edited = original.replaceAll(`"backup_id":${canary.restore_point!.backup_id}`, `"backup_id":${older.id}`);
    writeFileSync(journalPath, edited);
    const tampered = await runCli(['restore', path, '--yes'], simEnv(sim));
    expect(tampered.stdout).toMatch(new RegExp(`not restored .*: backup ${older.id} is not this run's restore point`));
    expect(restores(sim)).toHaveLength(0);

    // As after a SIGKILL between the journal's "sending" and the answer: it may have reached the service.
    const sending = {
      ...JSON.parse(
        original
          .split('\n')
          .filter(Boolean)
          .reverse()
          .find((l) => l.includes(`"step":"${canary.step_id}"`))!,
      ),
      t: 'update',
      at: Date.now(),
    };
    sending.result = { ...sending.result, restored: { backup_id: canary.restore_point!.backup_id, operation_id: null, status: 'sending' } };
    writeFileSync(journalPath, `${original}${JSON.stringify(sending)}\n`);
    const after = await runCli(['restore', path, '--yes'], simEnv(sim));
    expect(after.stdout).toMatch(/not restored .*: restore unknown already .*may have reached the service/);
    expect(restores(sim)).toHaveLength(0);
  });
});

describe('sitefleet restore: never beyond what broke', () => {
  it('a write the service refused broke nothing: not restored unless named with --steps', async () => {
    // Refused at once (404, never retried), where 500s were refused only after their retries' backoff (seconds).
    const { sim } = await start({ sites: 16, themes: 4, seed: 3, operationDelayMs: 100, missingEndpoints: ['bulkUpdateThemes'] });
    const { theme } = busiestTheme(sim);
    const { code, report, path } = await run(sim, playbook(sim, theme, 'leave'));
    expect(code).toBe(3);
    const refused = failedWrite(report);
    expect(refused.health).toBeUndefined(); // never checked after: nothing was changed
    const quiet = await runCli(['restore', path, '--yes'], simEnv(sim));
    expect(quiet.stdout).toContain('nothing to restore');
    expect(quiet.code).toBe(0);
    expect(restores(sim)).toHaveLength(0);
    // Named, it is looked at: its site answers healthy, so there is nothing to put back.
    const named = await runCli(['restore', path, '--yes', '--steps', refused.step_id!], simEnv(sim));
    expect(named.stdout).toMatch(/its site answers healthy now \(HTTP 200\): nothing to restore/);
    expect(restores(sim)).toHaveLength(0);
  });

  it('a failure written into the journal by hand: the site answers healthy now, so nothing is restored', async () => {
    const { sim } = await start({ sites: 16, themes: 4, seed: 3, operationDelayMs: 100 });
    const { theme } = busiestTheme(sim);
    // A healthy write's restore point is removed once judged, unless the task keeps it.
    const file = playbook(sim, theme, 'leave');
    writeFileSync(file, readFileSync(file, 'utf8').replace('backup_first: true', 'backup_first: { keep: 1 }'));
    const { code, path } = await run(sim, file);
    expect(code).toBe(0);
    const journalPath = path.replace(/\.json$/, '.journal.jsonl');
    const lines = readFileSync(journalPath, 'utf8').split('\n').filter(Boolean);
    const healthy = lines
      .map((l) => JSON.parse(l) as { t: string; step?: string; result?: ReportResult })
      .findLast((r) => r.result?.health?.outcome === 'healthy')!;
    const forged = {
      ...healthy,
      t: 'update',
      at: Date.now(),
      result: { ...healthy.result!, status: 'failed', health: { ...healthy.result!.health!, outcome: 'unhealthy', after: 'HTTP 500' } },
    };
    writeFileSync(journalPath, `${lines.join('\n')}\n${JSON.stringify(forged)}\n`);
    const res = await runCli(['restore', path, '--yes', '--steps', healthy.step!], simEnv(sim));
    expect(res.stdout).toMatch(/not restored .*: its site answers healthy now \(HTTP 200\): nothing to restore/);
    expect(restores(sim)).toHaveLength(0);
  });

  it('a broken site whose restore point is gone: said, nothing sent, exit 1', async () => {
    const { sim, path, env, canary } = await brokenRun();
    env.backups = env.backups.filter((b) => b.id !== canary.restore_point!.backup_id);
    const res = await runCli(['restore', path, '--yes'], simEnv(sim));
    expect(res.code).toBe(1);
    expect(res.stdout).toMatch(new RegExp(`not restored .*: backup ${canary.restore_point!.backup_id} is no longer in the environment's backup list`));
    expect(restores(sim)).toHaveLength(0);
  });
});

describe('a restore cut off by SIGKILL', () => {
  it('the process killed while its restore is on the wire: neither resume nor restore sends it again', async () => {
    const { sim } = await start({ sites: 16, themes: 4, seed: 3, operationDelayMs: 100, slowMs: 2500 });
    const { theme } = busiestTheme(sim);
    sim.breakTheme(`${theme}@latest`);
    // The service takes the restore and answers 2.5 s later (the kill follows its taking within a few
    // polls of 20 ms): the process dies between its journal's "sending" and the answer, the one moment
    // a second restore could be sent by mistake.
    sim.setFaults({ slow: 1 }, { only: ['restoreBackup'] });
    const dir = tempDir();
    const path = join(dir, 'r.json');
    const journal = join(dir, 'r.journal.jsonl');
    const running = startCli(['run', playbook(sim, theme), '--yes', '--poll-interval', '50', '--report', path], simEnv(sim));
    // The event is the service taking the restore (its answer is 2.5 s away), not the journal's line
    // written just before it is sent: a process killed between the two has sent nothing at all.
    await waitFor(() => [...sim.operations.all.values()].some((op) => op.kind === ENDPOINTS.restoreBackup.operation), 20_000);
    expect(readFileSync(journal, 'utf8')).toContain('"status":"sending"');
    running.child.kill('SIGKILL');
    expect((await running.done).signal).toBe('SIGKILL');
    sim.setFaults({});
    await waitFor(() => restores(sim).length === 1, 10_000); // the slow answer went out to no one

    const resumed = await runCli(['resume', path, '--yes', '--poll-interval', '50'], simEnv(sim));
    expect(resumed.code).not.toBe(2);
    const again = await runCli(['restore', path, '--yes'], simEnv(sim));
    expect(again.stdout).toMatch(/not restored .*: restore unknown already .*may have reached the service/);
    expect(restores(sim)).toHaveLength(1);
    const report = JSON.parse(readFileSync(path, 'utf8')) as Report;
    expect(failedWrite(report).restored).toMatchObject({ status: 'unknown', operation_id: null });
  }, 60_000);
});
