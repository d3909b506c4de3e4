import { readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { Report, ReportResult } from '../../src/report/report.js';
import { runCli, simEnv, tempDir, writePlaybook } from '../helpers/cli.js';
import { useSimulator } from '../helpers/sim.js';

const start = useSimulator();
const readReport = (file: string) => JSON.parse(readFileSync(file, 'utf8')) as Report;
const steps = (report: Report) => report.results.filter((r): r is ReportResult & { step_id: string } => r.step_id !== null);
const OUTER = 'Operation failed! Please refer to `data` for more details.';
/** Every site's id, as a playbook's `sites:` map: site-scoped actions need them (the listing has none). */
const sitesMap = (sim: Awaited<ReturnType<typeof start>>['sim']) =>
  `sites:\n${[...sim.fleet.sites.values()].map((s) => `  ${s.displayName}: ${s.id}`).join('\n')}\n`;

describe.each(['spec', 'real'] as const)('what the %s profile’s answers carry', (profile) => {
  it('a fleet-wide `wp core version` gives one row per environment in output_file and the outputs grouped in the summary, with no request added', async () => {
    const { sim } = await start({ profile, sites: 8, operationDelayMs: 50, operationVisibleAfterMs: 0, createRate: '100/s' });
    const dir = tempDir();
    const [report, csv, junit] = [join(dir, 'r.json'), join(dir, 'core.csv'), join(dir, 'j.xml')];
    const playbook = `version: 1\nname: ask\nsettings: { rate_limit: 100/s }\ntasks:\n  - { name: core, action: wp_cli.run, target: all, wait: true, with: { wp_command: "wp core version", output_file: ${csv} } }\n`;
    const res = await runCli(['run', writePlaybook(playbook, dir), '--yes', '--report', report, '--junit', junit, '--poll-interval', '50'], simEnv(sim));
    expect(res.code, res.stderr).toBe(0);
    const results = steps(readReport(report));
    expect(results).toHaveLength(sim.fleet.environments.size);
    const rows = readFileSync(csv, 'utf8').trimEnd().split('\n');
    expect(rows[0]).toBe('site,environment,env_id,status,output');
    expect(
      rows
        .slice(1)
        .map((row) => row.split(',')[2])
        .sort(),
    ).toEqual([...sim.fleet.environments.keys()].sort());
    if (profile === 'real') {
      // Each environment's version, as the service printed it; the summary groups them and the counts add up.
      for (const r of results) expect(r.output, r.target.env_id).toMatch(/^\d+\.\d+(\.\d+)?$/);
      for (const r of results) expect(r.operation_id).toMatch(/^cli:run-wp-cli-/);
      for (const r of results) expect(rows).toContain(`${r.target.site},${r.target.environment},${r.target.env_id},succeeded,${r.output}`);
      const line = res.stdout.split('\n').find((l) => l.startsWith('output of "wp core version" (core): '))!;
      const groups = [...line.matchAll(/(\d+\.\d+\.\d+) on (\d+)/g)].map((m) => [m[1], Number(m[2])] as const);
      expect(new Set(groups.map(([version]) => version))).toEqual(new Set(results.map((r) => r.output)));
      expect(groups.reduce((n, [, count]) => n + count, 0)).toBe(results.length);
      expect(groups.length).toBeGreaterThan(1); // the fleet is not all on one version: the smaller group names its environments
      expect(line).toMatch(/ on \d+: [^ ]+\/(live|staging)/);
    } else {
      // The spec profile returns no output: allowed, each step says null, and the summary says it once.
      for (const r of results) expect(r).toMatchObject({ status: 'succeeded', output: null });
      expect(res.stdout).toContain(`output of "wp core version" (core): none returned on ${results.length} environments`);
    }
    // The outputs come from answers already read: a listing, one write per environment, and their polls.
    const endpoints = new Set(sim.log.map((e) => e.endpoint));
    expect([...endpoints].sort()).toEqual(['getOperation', 'listApiKeys', 'listThemes', 'runWpCliCommand']);
    expect(sim.log.filter((e) => e.endpoint === 'runWpCliCommand')).toHaveLength(results.length);
    // The report with its operation ids (opaque on the real service) is read back by `status`.
    const status = await runCli(['status', report], simEnv(sim));
    expect(status.code, status.stderr).toBe(0);
  });

  it('failed operations carry their specific reason into the report, the summary and JUnit; the outer text stays in error', async () => {
    const { sim } = await start({ profile, sites: 3, failOperations: 1, operationDelayMs: 50, operationVisibleAfterMs: 0 });
    const dir = tempDir();
    const [report, junit] = [join(dir, 'r.json'), join(dir, 'j.xml')];
    const playbook = `version: 1\nname: php\nsettings: { rate_limit: 100/s }\ntasks:\n  - { name: php, action: php.set_version, target: all, wait: true, with: { php_version: "8.3" } }\n`;
    const res = await runCli(['run', writePlaybook(playbook, dir), '--yes', '--report', report, '--junit', junit, '--poll-interval', '50'], simEnv(sim));
    expect(res.code).toBe(1);
    const results = steps(readReport(report));
    expect(results.length).toBe(sim.fleet.environments.size);
    const xml = readFileSync(junit, 'utf8');
    for (const r of results) {
      expect(r.status).toBe('failed');
      expect(r.reason).toBe(
        `operation failed: php:modify-version failed on ${r.target.site}/${r.target.environment}: the service could not complete the change`,
      );
      expect(r.error).toBe(
        `OperationFailed: php:modify-version failed on ${r.target.site}/${r.target.environment}: the service could not complete the change${profile === 'real' ? ` (the service's summary: ${OUTER})` : ''}`,
      );
      expect(xml).toContain(`message="operation failed: php:modify-version failed on ${r.target.site}/${r.target.environment}`);
    }
    expect(res.stdout).toContain(`(php): operation failed: php:modify-version failed on ${results[0]!.target.site}/${results[0]!.target.environment}`);
    expect(res.stdout).not.toContain('Please refer to');
  });
});

describe('a WP-CLI task’s output_file on resume', () => {
  it('is checked before anything is sent (a file of another kind there: exit 2, nothing sent), and written whole after', async () => {
    const { sim } = await start({ sites: 2, operationDelayMs: 0 });
    const dir = tempDir();
    const [report, out] = [join(dir, 'r.json'), join(dir, 'out.json')];
    const journal = join(dir, 'r.journal.jsonl');
    const file = writePlaybook(
      `version: 1\nname: w\ntasks:\n  - { name: cache, action: wp_cli.run, target: all, with: { wp_command: "wp cache flush", output_file: ${out} } }\n`,
      dir,
    );
    expect((await runCli(['run', file, '--yes', '--report', report], simEnv(sim))).code).toBe(0);
    // As if the run had been killed right after its start record, and someone's notes had been saved at the output's path.
    writeFileSync(journal, `${readFileSync(journal, 'utf8').split('\n')[0]}\n`);
    writeFileSync(out, 'my notes\n');
    const requests = sim.log.length;
    const refused = await runCli(['resume', report, '--yes'], simEnv(sim));
    expect(refused.code).toBe(2);
    expect(refused.stderr).toMatch(/tasks\.0\.with\.output_file: .*out\.json exists and is not a sitefleet command-output file/);
    expect(readFileSync(out, 'utf8')).toBe('my notes\n');
    expect(sim.log).toHaveLength(requests);
    rmSync(out);
    const resumed = await runCli(['resume', report, '--yes'], simEnv(sim));
    expect(resumed.code, resumed.stderr).toBe(0);
    const rows = JSON.parse(readFileSync(out, 'utf8')) as { env_id: string; status: string }[];
    expect(rows.map((r) => r.env_id).sort()).toEqual([...sim.fleet.environments.keys()].sort());
    expect(statSync(out).mode & 0o777).toBe(0o600);
  });
});

describe('a command whose output would copy secrets into the report', () => {
  it('`wp config get` is a warning that names the field; --strict refuses it; `wp core version` is not', async () => {
    const dir = tempDir();
    const file = writePlaybook(
      'version: 1\nname: w\ncompany: 00000000-0000-4000-8000-000000000002\ntasks:\n' +
        '  - { name: creds, action: wp_cli.run, target: all, with: { wp_command: "wp config get DB_PASSWORD" } }\n' +
        '  - { name: core, action: wp_cli.run, target: all, with: { wp_command: "wp core version" } }\n',
      dir,
    );
    const lenient = await runCli(['validate', file]);
    expect(lenient.code).toBe(0);
    expect(lenient.stderr.trim().split('\n')).toEqual([
      expect.stringMatching(/playbook\.yaml:5:\d+: tasks\.0\.with\.wp_command: warning: prints wp-config\.php secrets/),
    ]);
    expect((await runCli(['validate', '--strict', file])).code).toBe(2);
  });
});

describe('the real profile’s recorded answers, end to end', () => {
  it('a domain already in use fails with the service’s nested reason, not the outer pointer to it', async () => {
    const { sim } = await start({ profile: 'real', sites: 4, operationDelayMs: 50, operationVisibleAfterMs: 0, createRate: '100/s' });
    const taken = [...sim.fleet.domains.values()][0]!;
    const other = [...sim.fleet.environments.values()].find((e) => e.id !== taken.envId)!;
    const dir = tempDir();
    const report = join(dir, 'r.json');
    const playbook = `version: 1\nname: d\nsettings: { rate_limit: 100/s }\ntasks:\n  - { name: add, action: domains.add, target: { ids: ["${other.id}"] }, wait: true, with: { domain_name: ${taken.name} } }\n`;
    const res = await runCli(['run', writePlaybook(playbook, dir), '--yes', '--report', report, '--poll-interval', '50'], simEnv(sim));
    expect(res.code).toBe(1);
    const [step] = steps(readReport(report));
    expect(step!.reason).toBe(`operation failed: This domain "${taken.name}" is already in use`);
    expect(step!.error).toContain(OUTER);
    expect(res.stdout).toContain(`This domain "${taken.name}" is already in use`);
    expect(other.domains.some((d) => d.name === taken.name)).toBe(false);
  });

  it('created environments are named by their new ids in the report and the summary, and the next plan finds them', async () => {
    const { sim } = await start({ profile: 'real', sites: 4, operationDelayMs: 50, operationVisibleAfterMs: 0, createRate: '100/s' });
    const dir = tempDir();
    const report = join(dir, 'r.json');
    const file = writePlaybook(
      `version: 1\nname: qa\nsettings: { rate_limit: 100/s }\n${sitesMap(sim)}tasks:\n  - { name: qa, action: environments.create_plain, target: { environment: live }, wait: true, with: { display_name: qa } }\n` +
        '  - { name: copy, action: environments.clone, target: { environment: live }, wait: true, with: { display_name: copy, source_environment: live } }\n',
      dir,
    );
    const res = await runCli(['run', file, '--yes', '--report', report, '--poll-interval', '50'], simEnv(sim));
    expect(res.code, res.stderr).toBe(0);
    const results = steps(readReport(report));
    expect(results).toHaveLength(2 * sim.fleet.sites.size);
    for (const r of results) {
      const site = sim.fleet.sites.get(r.target.site_id!)!;
      const made = [...sim.fleet.environments.values()].find((e) => e.siteId === site.id && e.displayName === (r.task === 'qa' ? 'qa' : 'copy'))!;
      expect(r.created).toEqual({ env_id: made.id });
      expect(r.operation_data).toEqual({ idEnv: made.id });
    }
    expect(res.stdout).toContain(`created (qa): ${sim.fleet.sites.size} environments: `);
    const copies = results.filter((r) => r.task === 'copy');
    expect(res.stdout).toContain(`${copies[0]!.target.site} → ${(copies[0]!.created as { env_id: string }).env_id}`);
    // A clone has the source's themes, so the listing shows it: the playbook run again makes no second copy.
    const again = await runCli(['plan', file, '--verbose'], simEnv(sim));
    expect(again.code, again.stderr).toBe(0);
    for (const r of copies) expect(again.stdout).toContain(`an environment named "copy" already (env_id ${(r.created as { env_id: string }).env_id})`);
  });

  it('SSH config answered flat and the recorded 401 body are read as they come', async () => {
    const { sim } = await start({ profile: 'real', sites: 3 });
    const dir = tempDir();
    const sites = writePlaybook(
      Object.entries(Object.fromEntries([...sim.fleet.sites.values()].map((s) => [s.displayName, s.id])))
        .map(([n, id]) => `${n}: ${id}`)
        .join('\n'),
      dir,
      'sites.yaml',
    );
    const ssh = await runCli(['ssh-config', '--sites', sites, '--environment', 'live'], simEnv(sim));
    expect(ssh.code, ssh.stderr).toBe(0);
    expect(ssh.stdout.match(/^Host /gm)).toHaveLength(sim.fleet.sites.size);
    expect(ssh.stdout).toMatch(/^ {2}Port \d+$/m);
    const denied = await runCli(['inventory'], { ...simEnv(sim), SITEFLEET_TOKEN: 'revoked' });
    expect(denied.code).toBe(3);
    expect(denied.stderr).toContain('Unauthenticated.');
  });
});
