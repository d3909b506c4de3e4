import { spawn, spawnSync } from 'node:child_process';
import { readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { CLI, runCli, runCliProcess, simEnv, tempDir, writePlaybook } from '../helpers/cli.js';
import { useSimulator } from '../helpers/sim.js';

const start = useSimulator();

const ips = (file: string) =>
  `version: 1\nname: x\ntasks:\n  - { name: a, action: denied_ips.set, target: all, with: { ip_list_file: ${JSON.stringify(file)} } }\n`;

/** Each case: a playbook (or its folder's files) that `validate` and `run` both refuse with exit 2 and one pointed line. */
const cases: [string, (dir: string) => string, RegExp][] = [
  [
    'an ip_list_file that is somebody’s password file: nothing of it is quoted, only the line',
    (dir) => {
      const secret = Array.from({ length: 40 }, (_, i) => `user${i}:$6$abcdefghSECRETSECRETSECRETSECRET:19000:0:99999:7:::`).join('\n');
      writeFileSync(join(dir, 'shadow'), secret);
      return ips('shadow');
    },
    /shadow:1:1: tasks\.0\.with\.ip_list_file: line 1 is not an IPv4/,
  ],
  [
    'an ip_list_file outside the playbook’s folder',
    () => ips('/etc/passwd'),
    /tasks\.0\.with\.ip_list_file: \/etc\/passwd is outside the playbook's folder: pass --allow-outside \/etc\/passwd or list it under settings\.allowed_files/,
  ],
  [
    'an ip_list_file reached by climbing out of the folder',
    () => ips('../../../../../../etc/hostname'),
    /ip_list_file: \.\.\/\.\.\/.*etc\/hostname is outside the playbook's folder/,
  ],
  [
    'an ip_list_file that is a link inside the folder to a file outside it',
    (dir) => (symlinkSync('/etc/passwd', join(dir, 'ips.txt')), ips('ips.txt')),
    /ip_list_file: ips\.txt is a link to a file outside the playbook's folder/,
  ],
  [
    'an ip_list_file that is /dev/zero, allowed by the playbook',
    () => `${ips('/dev/zero')}settings: { allowed_files: [/dev/zero] }\n`,
    /ip_list_file: \/dev\/zero is not a regular file/,
  ],
  [
    'an ip_list_file with more entries than the API takes',
    (dir) => (writeFileSync(join(dir, 'many'), Array.from({ length: 10_001 }, (_, i) => `10.${i >> 16}.${(i >> 8) & 255}.${i & 255}`).join('\n')), ips('many')),
    /holds 10001 entries; the API takes at most 10000/,
  ],
  [
    'a YAML alias bomb',
    () =>
      `a: &a ["x","x","x","x","x","x","x","x","x"]\nb: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a]\nc: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b]\nd: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c]\ne: [*d,*d,*d,*d,*d,*d,*d,*d,*d]\n`,
    /playbook\.yaml:1:1: \(root\): YAML: .*alias/i,
  ],
  [
    'a rate with a zero period',
    () => 'version: 1\nname: x\nsettings: { rate_limit: 5/0s }\ntasks:\n  - { name: a, action: php.set_version, target: all, with: { php_version: "8.3" } }\n',
    /settings\.rate_limit: rate "5\/0s" has a zero period/,
  ],
  [
    'a DNS A record whose value is not an address',
    () =>
      'version: 1\nname: x\ntasks:\n  - { name: a, action: dns_records.create, target: all, with: { type: A, name: "www.{{domain}}", resource_records: [{ value: "not-an-ip" }] } }\n',
    /tasks\.0\.with\.resource_records: resource_records\.0\.value: "not-an-ip" is not a valid IPv4 address/,
  ],
  [
    'a backup tag far past the API’s limit',
    () => `version: 1\nname: x\ntasks:\n  - { name: a, action: backups.create, target: all, with: { tag: ${'t'.repeat(2000)} } }\n`,
    /tasks\.0\.with(\.tag)?: tag: must NOT have more than \d+ characters/,
  ],
  [
    'an output_file in a folder that does not exist',
    () =>
      'version: 1\nname: x\ntasks:\n  - { name: a, action: admin_users.login_link, target: all, with: { email: ops@example.com, output_file: /nonexistent-folder/links.json } }\n',
    /output_file: the folder \/nonexistent-folder does not exist/,
  ],
];

describe('hostile and careless input: exit 2, one pointed line, nothing sent', () => {
  it.each(cases)('%s', async (_, make, message) => {
    const { sim } = await start({ sites: 2 });
    const dir = tempDir();
    const file = writePlaybook(make(dir), dir);
    for (const args of [
      ['validate', file],
      ['run', file, '--yes', '--report', join(dir, 'r.json')],
    ]) {
      const result = await runCli(args, simEnv(sim));
      expect(result.code, `${args[0]}: ${result.stderr}`).toBe(2);
      const lines = result.stderr.trim().split('\n');
      expect(lines[0]).toMatch(message);
      expect(lines.length).toBeLessThanOrEqual(6);
      expect(lines.at(-1)).toMatch(/problems?; nothing was sent/);
      expect(result.stderr).not.toMatch(/SECRETSECRETSECRETSECRET|at .*\.js:\d+/);
    }
    expect(sim.log).toEqual([]);
  });

  it('a file outside the folder is read when --allow-outside or settings.allowed_files names it, and still nothing of it is quoted', async () => {
    const { sim } = await start({ sites: 2 });
    const outside = tempDir();
    const list = join(outside, 'deny.txt');
    writeFileSync(list, '203.0.113.7\n# a comment\n198.51.100.0/24\n');
    const dir = tempDir();
    const file = writePlaybook(ips(list), dir);
    const refused = await runCli(['validate', file]);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain(`pass --allow-outside ${list}`);
    const allowed = await runCli(['--allow-outside', list, 'validate', file]);
    expect(allowed.code, allowed.stderr).toBe(0);
    const run = await runCli(['run', file, '--yes', '--allow-outside', list, '--report', join(dir, 'r.json')], simEnv(sim));
    expect(run.code, run.stderr).toBe(0);
    expect(sim.log.filter((e) => e.method === 'PUT').map((e) => e.body)).toContainEqual(
      expect.objectContaining({ ip_list: ['203.0.113.7', '198.51.100.0/24'] }),
    );

    writeFileSync(list, 'ghp_SECRETTOKENSECRETTOKEN\n');
    const listed = writePlaybook(`${ips(list)}settings: { allowed_files: [${JSON.stringify(list)}] }\n`, dir, 'listed.yaml');
    const bad = await runCli(['validate', listed]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/deny\.txt:1:1: tasks\.0\.with\.ip_list_file: line 1 is not an IPv4/);
    expect(bad.stderr).not.toContain('ghp_');
  });

  it('a playbook over a megabyte, and a FIFO, are refused without reading them', async () => {
    const dir = tempDir();
    const big = writePlaybook(`version: 1\nname: x\n# ${'x'.repeat(1 << 20)}\ntasks: []\n`, dir, 'big.yaml');
    const result = await runCli(['validate', big]);
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/big\.yaml:1:1: \(root\): cannot read the playbook: .*big\.yaml is 1\.0 MiB, more than the 1\.0 MiB allowed/);
    const fifo = join(dir, 'pipe.txt');
    expect(spawnSync('mkfifo', [fifo]).status).toBe(0);
    // A process of its own: were the FIFO read, it would block the reader's whole process, this one included.
    const fromFifo = await runCliProcess(['validate', writePlaybook(ips('pipe.txt'), dir)], {}, { timeoutMs: 10_000 });
    expect(fromFifo.code).toBe(2);
    expect(fromFifo.stderr).toMatch(/pipe\.txt is not a regular file/);
  });

  it('unset ${VARS} are warnings for validate (CI may lack them), errors with --strict and for run', async () => {
    const dir = tempDir();
    const file = writePlaybook(
      'version: 1\nname: x\ntasks:\n  - { name: a, action: backups.create, target: all, with: { tag: "nightly-${NOT_SET_HERE}" } }\n',
      dir,
    );
    const lenient = await runCli(['validate', file]);
    expect(lenient.code).toBe(0);
    expect(lenient.stderr).toMatch(/playbook\.yaml:4:\d+: tasks\.0\.with\.tag: warning: environment variable NOT_SET_HERE is not set/);
    expect(lenient.stdout).toContain('valid (1 warnings)');
    const strict = await runCli(['validate', '--strict', file]);
    expect(strict.code).toBe(2);
    expect(strict.stderr).toMatch(/tasks\.0\.with\.tag: environment variable NOT_SET_HERE is not set/);
  });

  it('--report naming the playbook (or any file that is not a report) is refused, and the file is left alone', async () => {
    const { sim } = await start({ sites: 2 });
    const dir = tempDir();
    const file = writePlaybook('version: 1\nname: x\ntasks:\n  - { name: a, action: php.set_version, target: all, with: { php_version: "8.3" } }\n', dir);
    const before = readFileSync(file, 'utf8');
    const result = await runCli(['run', file, '--yes', '--report', file], simEnv(sim));
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('exists and is not a sitefleet report: refusing to overwrite it');
    expect(readFileSync(file, 'utf8')).toBe(before);
    expect(sim.log).toEqual([]);
  });

  it('inventory piped into a reader that leaves early ends quietly', async () => {
    const { sim } = await start({ sites: 60, themes: 8 });
    const child = spawn(process.execPath, [CLI, 'inventory', '--format', 'json'], {
      env: { PATH: process.env.PATH, HOME: process.env.HOME, ...simEnv(sim) },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.stdout.once('data', () => child.stdout.destroy());
    const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
    expect(stderr).not.toMatch(/EPIPE|Error/);
    expect(code).toBe(0);
  });
});

describe('flags that look alike', () => {
  it('`sim --token` and `sim --size` are the simulator’s own; `status` on a run that holds the lock exits 4 and touches nothing', async () => {
    const { spawn } = await import('node:child_process');
    const child = spawn(process.execPath, [CLI, 'sim', '--json', '--token', 'sim-own-token', '--size', '2'], { stdio: ['ignore', 'pipe', 'pipe'] });
    const line = await new Promise<string>((resolve) => child.stdout.once('data', (d: Buffer) => resolve(d.toString())));
    const info = JSON.parse(line) as { token: string; environments: number };
    expect(info.token).toBe('sim-own-token');
    expect(info.environments).toBeLessThanOrEqual(4);
    child.kill('SIGTERM');
    await new Promise((r) => child.once('close', r));

    const { sim } = await start({ sites: 2, operationDelayMs: 0 });
    const env = simEnv(sim);
    const dir = tempDir();
    const report = join(dir, 'r.json');
    const file = writePlaybook('version: 1\nname: s\ntasks:\n  - { name: b, action: backups.create, target: all, with: { tag: s } }\n', dir);
    expect((await runCli(['run', file, '--yes', '--report', report], env)).code).toBe(0);
    const before = readFileSync(report, 'utf8');
    const { mkdirSync } = await import('node:fs');
    const { hostname } = await import('node:os');
    mkdirSync(join(env.SITEFLEET_STATE_DIR!, 'locks'), { recursive: true });
    writeFileSync(
      join(env.SITEFLEET_STATE_DIR!, 'locks', `${sim.companyId}.lock`),
      JSON.stringify({ pid: process.pid, host: hostname(), started_at: 'now', command: 'run' }),
    );
    const status = await runCli(['status', report, '--wait', '5s'], env);
    expect(status.code).toBe(4);
    expect(readFileSync(report, 'utf8')).toBe(before);
  });
});
