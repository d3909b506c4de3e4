import { spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, readFileSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli, simEnv, tempDir, writePlaybook, type CliResult } from '../helpers/cli.js';
import { useSimulator } from '../helpers/sim.js';

const start = useSimulator();

const PHP = 'version: 1\nname: p\ntasks:\n  - { name: php, action: php.set_version, target: all, with: { php_version: "8.3" } }\n';
// The service gives a login link only for an admin user that exists: the first task makes it.
const links = (file: string) =>
  `version: 1\nname: l\ntasks:\n  - { name: admin, action: admin_users.create, target: all, with: { email: ops@example.org, first_name: Ops, last_name: Team } }\n  - { name: links, action: admin_users.login_link, target: all, with: { email: ops@example.org, output_file: ${JSON.stringify(file)} } }\n`;

/** Exit 2 and one line naming the flag, the path and why; nothing else printed. */
function refused(result: CliResult, named: string, why: RegExp): void {
  expect(result.code, result.stderr).toBe(2);
  const lines = result.stderr.trimEnd().split('\n');
  expect(lines).toHaveLength(1);
  expect(lines[0]).toContain(named);
  expect(lines[0]).toMatch(why);
  expect(lines[0]).not.toMatch(/\n|at .*\.js:\d+/);
}

describe("outputs never clobber the run's own files", () => {
  it("run --junit at the run's own journal (not there yet): exit 2, no journal made, nothing sent", async () => {
    const { sim } = await start({ sites: 2 });
    const dir = tempDir();
    const file = writePlaybook(PHP, dir);
    const report = join(dir, 'r.json');
    const journal = join(dir, 'r.journal.jsonl');
    const result = await runCli(['run', file, '--yes', '--report', report, '--junit', journal], simEnv(sim));
    refused(result, `--junit ${journal}`, /is the run's journal: refusing to overwrite it/);
    expect(existsSync(journal)).toBe(false);
    expect(existsSync(report)).toBe(false);
    expect(sim.log).toEqual([]);
  });

  it('resume --junit (or --summary-md) at the journal it continues: exit 2, the journal unchanged, nothing sent; resume works after', async () => {
    const { sim } = await start({ sites: 2, operationDelayMs: 0 });
    const dir = tempDir();
    const report = join(dir, 'r.json');
    const journal = join(dir, 'r.journal.jsonl');
    expect((await runCli(['run', writePlaybook(PHP, dir), '--yes', '--report', report], simEnv(sim))).code).toBe(0);
    // As if the run had been killed right after its start record: every step is left to send.
    writeFileSync(journal, `${readFileSync(journal, 'utf8').split('\n')[0]}\n`);
    const before = readFileSync(journal, 'utf8');
    const requests = sim.log.length;
    for (const flag of ['--junit', '--summary-md']) {
      const result = await runCli(['resume', report, '--yes', flag, journal], simEnv(sim));
      refused(result, `${flag} ${journal}`, /refusing to overwrite it/);
      expect(readFileSync(journal, 'utf8')).toBe(before);
      expect(sim.log).toHaveLength(requests);
    }
    const resumed = await runCli(['resume', report, '--yes'], simEnv(sim));
    expect(resumed.code, resumed.stderr).toBe(0);
  });

  it('--summary-md, --junit, --report and plan --out at the playbook, the saved plan or the sites file: exit 2, each unchanged, nothing sent', async () => {
    const { sim } = await start({ sites: 2 });
    const dir = tempDir();
    const file = writePlaybook(PHP, dir);
    const sites = join(dir, 'sites.csv');
    writeFileSync(sites, 'name,id\n');
    const playbookText = readFileSync(file, 'utf8');
    const env = simEnv(sim);
    const report = join(dir, 'r.json');
    refused(await runCli(['run', file, '--yes', '--report', report, '--summary-md', file], env), `--summary-md ${file}`, /refusing to overwrite it/);
    refused(await runCli(['run', file, '--dry-run', '--report', report, '--junit', file], env), `--junit ${file}`, /refusing to overwrite it/);
    refused(await runCli(['plan', file, '--out', file], env), `--out ${file}`, /refusing to overwrite it/);
    refused(await runCli(['--sites', sites, 'plan', file, '--out', sites], env), `--out ${sites}`, /refusing to overwrite it/);
    expect(readFileSync(file, 'utf8')).toBe(playbookText);
    expect(readFileSync(sites, 'utf8')).toBe('name,id\n');
    expect(existsSync(report)).toBe(false);
    expect(sim.log).toEqual([]);

    // A saved plan is replaced by a new one, and never by anything else.
    const saved = join(dir, 'plan.json');
    expect((await runCli(['plan', file, '--out', saved], env)).code).toBe(0);
    expect((await runCli(['plan', file, '--out', saved], env)).code).toBe(0);
    const planText = readFileSync(saved, 'utf8');
    const requests = sim.log.length;
    refused(
      await runCli(['run', '--plan', saved, '--yes', '--report', report, '--summary-md', saved], env),
      `--summary-md ${saved}`,
      /refusing to overwrite it/,
    );
    refused(await runCli(['run', '--plan', saved, '--yes', '--report', saved], env), `--report ${saved}`, /refusing to overwrite it/);
    expect(readFileSync(saved, 'utf8')).toBe(planText);
    expect(sim.log).toHaveLength(requests);
  });

  it('outputs of their own kind are replaced; another file, a folder, a FIFO or a link is refused, and two outputs never share a path', async () => {
    const { sim } = await start({ sites: 2, operationDelayMs: 0 });
    const dir = tempDir();
    const file = writePlaybook(PHP, dir);
    const env = simEnv(sim);
    const junit = join(dir, 'j.xml');
    const md = join(dir, 's.md');
    const first = await runCli(['run', file, '--yes', '--report', join(dir, 'a.json'), '--junit', junit, '--summary-md', md], env);
    expect(first.code, first.stderr).toBe(0);
    writeFileSync(md, `${readFileSync(md, 'utf8')}\nnotes of mine\n`);
    const again = await runCli(['run', file, '--yes', '--report', join(dir, 'b.json'), '--junit', junit, '--summary-md', md], env);
    expect(again.code, again.stderr).toBe(0);
    expect(readFileSync(md, 'utf8')).not.toContain('notes of mine');
    expect(readFileSync(junit, 'utf8')).toContain('<testsuites');

    const notes = join(dir, 'notes.txt');
    writeFileSync(notes, 'keep me\n');
    const folder = join(dir, 'folder');
    mkdirSync(folder);
    const fifo = join(dir, 'fifo');
    expect(spawnSync('mkfifo', [fifo]).status).toBe(0);
    const link = join(dir, 'link.xml');
    symlinkSync(notes, link);
    const danglingReport = join(dir, 'dangling.json');
    symlinkSync(join(dir, 'nowhere.json'), danglingReport);
    const requests = sim.log.length;
    const run = (...args: string[]) => runCli(['run', file, '--yes', '--report', join(dir, 'c.json'), ...args], env);
    refused(await run('--junit', notes), `--junit ${notes}`, /exists and is not JUnit XML: refusing to overwrite it/);
    refused(await run('--summary-md', junit), `--summary-md ${junit}`, /exists and is not a sitefleet Markdown summary/);
    refused(await run('--junit', folder), `--junit ${folder}`, /is a folder/);
    refused(await run('--junit', fifo), `--junit ${fifo}`, /is not a regular file/);
    refused(await run('--junit', link), `--junit ${link}`, /link/);
    refused(await runCli(['run', file, '--yes', '--report', danglingReport], env), `--report ${danglingReport}`, /link/);
    refused(await run('--junit', join(dir, 'x.out'), '--summary-md', join(dir, 'x.out')), `--summary-md ${join(dir, 'x.out')}`, /is also --junit/);
    expect(readFileSync(notes, 'utf8')).toBe('keep me\n');
    expect(existsSync(join(dir, 'nowhere.json'))).toBe(false);
    expect(existsSync(join(dir, 'c.json'))).toBe(false);
    expect(sim.log).toHaveLength(requests);
  });
});

describe('appended outputs', () => {
  it('--log-file through a symlink is refused and its target left alone; so is a file that is not a sitefleet log; a log of its own is appended to', async () => {
    const { sim } = await start({ sites: 2, operationDelayMs: 0 });
    const dir = tempDir();
    const file = writePlaybook(PHP, dir);
    const env = simEnv(sim);
    const target = join(dir, 'precious.txt');
    writeFileSync(target, 'precious\n');
    const link = join(dir, 'run.log');
    symlinkSync(target, link);
    refused(await runCli(['--log-file', link, 'run', file, '--yes', '--report', join(dir, 'r.json')], env), `--log-file ${link}`, /link/);
    refused(await runCli(['--log-file', link, 'inventory'], env), `--log-file ${link}`, /link/);
    refused(await runCli(['--log-file', target, 'plan', file], env), `--log-file ${target}`, /is not a sitefleet log: refusing to append to it/);
    refused(await runCli(['--log-file', file, 'inventory'], env), `--log-file ${file}`, /refusing to append to it/);
    expect(readFileSync(target, 'utf8')).toBe('precious\n');
    expect(existsSync(join(dir, 'r.json'))).toBe(false);
    expect(sim.log).toEqual([]);

    const log = join(dir, 'logs', 'nightly.log');
    const first = await runCli(['--log-file', log, 'run', file, '--yes', '--report', join(dir, 'a.json')], env);
    expect(first.code, first.stderr).toBe(0);
    const once = readFileSync(log, 'utf8');
    expect(once).toContain('"app":"sitefleet"');
    const second = await runCli(['--log-file', log, 'run', file, '--yes', '--report', join(dir, 'b.json')], env);
    expect(second.code, second.stderr).toBe(0);
    expect(readFileSync(log, 'utf8').startsWith(once)).toBe(true);
    expect(readFileSync(log, 'utf8').length).toBeGreaterThan(once.length);
  });

  it('GITHUB_STEP_SUMMARY is appended to, never through a link nor onto the playbook', async () => {
    const { sim } = await start({ sites: 2 });
    const dir = tempDir();
    const file = writePlaybook(PHP, dir);
    const playbookText = readFileSync(file, 'utf8');
    const target = join(dir, 'precious.md');
    writeFileSync(target, '# precious\n');
    const link = join(dir, 'summary.md');
    symlinkSync(target, link);
    const run = (summary: string) => runCli(['run', file, '--dry-run', '--report', join(dir, 'r.json')], { ...simEnv(sim), GITHUB_STEP_SUMMARY: summary });
    refused(await run(link), `GITHUB_STEP_SUMMARY ${link}`, /link/);
    refused(await run(file), `GITHUB_STEP_SUMMARY ${file}`, /is the playbook: refusing to append to it/);
    expect(readFileSync(target, 'utf8')).toBe('# precious\n');
    expect(readFileSync(file, 'utf8')).toBe(playbookText);
    expect(sim.log).toEqual([]);
  });
});

describe('private outputs', () => {
  it("a task's output_file at the playbook, a link or a file of another kind: exit 2 naming the field, nothing sent", async () => {
    const { sim } = await start({ sites: 2 });
    const dir = tempDir();
    const file = join(dir, 'links.yaml');
    const notes = join(dir, 'notes.txt');
    writeFileSync(notes, 'keep me\n');
    const link = join(dir, 'links.json');
    symlinkSync(notes, link);
    for (const [output, why] of [
      [file, /exists and is not a login-links file: refusing to overwrite it/],
      [join(dir, 'r.journal.jsonl'), /is the run's journal: refusing to overwrite it/],
      [join(dir, 'r.json'), /is also --report/],
      [link, /link/],
      [notes, /exists and is not a login-links file: refusing to overwrite it/],
    ] as const) {
      writeFileSync(file, links(output));
      const text = readFileSync(file, 'utf8');
      const result = await runCli(['run', file, '--yes', '--report', join(dir, 'r.json')], simEnv(sim));
      expect(result.code, result.stderr).toBe(2);
      expect(result.stderr).toMatch(new RegExp(`links\\.yaml:5:\\d+: tasks\\.1\\.with\\.output_file: ${output.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} `));
      expect(result.stderr).toMatch(why);
      expect(readFileSync(file, 'utf8')).toBe(text);
    }
    expect(readFileSync(notes, 'utf8')).toBe('keep me\n');
    expect(existsSync(join(dir, 'r.json'))).toBe(false);
    expect(sim.log).toEqual([]);
  });

  it('login links replace an earlier links file, mode 0600 whatever the old one had', async () => {
    const { sim } = await start({ sites: 2 });
    const dir = tempDir();
    const out = join(dir, 'links.json');
    const file = writePlaybook(links(out), dir);
    const first = await runCli(['run', file, '--yes', '--report', join(dir, 'a.json')], simEnv(sim));
    expect(first.code, first.stderr).toBe(0);
    chmodSync(out, 0o644);
    const second = await runCli(['run', file, '--yes', '--report', join(dir, 'b.json')], simEnv(sim));
    expect(second.code, second.stderr).toBe(0);
    expect(statSync(out).mode & 0o777).toBe(0o600);
    const written = JSON.parse(readFileSync(out, 'utf8')) as { login_link: string }[];
    expect(written).toHaveLength(sim.fleet.environments.size);
  });
});
