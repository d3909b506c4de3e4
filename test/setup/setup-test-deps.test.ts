import { spawn } from 'node:child_process';
import { chmodSync, existsSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { tempDir } from '../helpers/cli.js';

// The setup step `npm test` takes first, run on a made-up machine: PATH is one folder of shims (`id`,
// `sudo`, `apt-get`, the components) that write down how they were called. No package is installed.
const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const SCRIPT = join(ROOT, 'scripts/setup-test-deps.mjs');
interface Component {
  component: string;
  command: string;
  debian: string;
  elsewhere: string;
}
const components = JSON.parse(readFileSync(join(ROOT, 'scripts/test-components.json'), 'utf8')) as Component[];
const redis = components.find((c) => c.command === 'redis-server')!;

interface Machine {
  uid: number;
  /** Absent, or asks for a password (`sudo -n` fails), or passwordless (runs what follows `-n`; `true` is the shell's). */
  sudo?: 'password' | 'passwordless';
  /** What `apt-get install` does: provides the package's command, exits 0 without it, or fails. */
  aptGet?: 'provides' | 'provides nothing' | 'fails';
  /** The components' commands on PATH before the step. */
  present: string[];
}

function shim(dir: string, name: string, body: string): void {
  writeFileSync(join(dir, name), `#!/bin/sh\n${body}\n`);
  chmodSync(join(dir, name), 0o755);
}

const machines: string[] = [];
afterEach(() => {
  for (const dir of machines.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** A PATH folder with the machine's shims; `log` collects every sudo and apt-get call, one line each. */
function makeMachine(machine: Machine): { path: string; log: string } {
  const dir = tempDir();
  machines.push(dir);
  const log = join(dir, 'calls.log');
  symlinkSync(process.execPath, join(dir, 'node'));
  symlinkSync('/usr/bin/env', join(dir, 'env'));
  shim(dir, 'id', `echo ${machine.uid}`);
  for (const command of machine.present) shim(dir, command, 'exit 0');
  if (machine.sudo === 'password') shim(dir, 'sudo', `echo "sudo $*" >> ${log}\necho 'sudo: a password is required' >&2\nexit 1`);
  if (machine.sudo === 'passwordless') shim(dir, 'sudo', `echo "sudo $*" >> ${log}\n[ "$1" = -n ] && shift\n"$@"`);
  if (machine.aptGet) {
    const provide = components.map((c) => `*" ${c.debian} "*) printf '#!/bin/sh\\n' > ${join(dir, c.command)}; /bin/chmod +x ${join(dir, c.command)};;`);
    const install = {
      provides: `case " $* " in ${provide.join(' ')} esac`,
      'provides nothing': 'exit 0',
      fails: `echo "E: Unable to locate package $5" >&2; exit 100`,
    }[machine.aptGet];
    shim(dir, 'apt-get', `echo "apt-get $* DEBIAN_FRONTEND=$DEBIAN_FRONTEND" >> ${log}\nif [ "$1" = install ]; then ${install}\nfi`);
  }
  return { path: dir, log };
}

const calls = (log: string) => (existsSync(log) ? readFileSync(log, 'utf8').split('\n').filter(Boolean) : []);
const others = components.filter((c) => c !== redis).map((c) => c.command);

function run(command: string, args: string[], path: string): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawn(command, args, { cwd: ROOT, env: { PATH: path, HOME: process.env.HOME }, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  return new Promise((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}
const setup = (path: string) => run(process.execPath, [SCRIPT], path);

describe('the setup step before the tests', () => {
  it('as root, asks apt-get (once updated, non-interactive) to install exactly the missing package, one line for it', async () => {
    const { path, log } = makeMachine({ uid: 0, aptGet: 'provides', present: others });
    const result = await setup(path);
    expect(calls(log)).toEqual([
      'apt-get update -qq DEBIAN_FRONTEND=noninteractive',
      `apt-get install -y -qq --no-install-recommends ${redis.debian} DEBIAN_FRONTEND=noninteractive`,
    ]);
    expect(result.stdout).toBe(`test setup: installing ${redis.debian} (Debian package) with apt-get\n`);
    expect(result).toMatchObject({ code: 0, stderr: '' });
    expect(existsSync(join(path, redis.command))).toBe(true);
  });

  it('with passwordless sudo, installs through `sudo -n`, DEBIAN_FRONTEND carried through it', async () => {
    const { path, log } = makeMachine({ uid: 1000, sudo: 'passwordless', aptGet: 'provides', present: others });
    const result = await setup(path);
    const sudo = 'sudo -n env DEBIAN_FRONTEND=noninteractive apt-get';
    const apt = `install -y -qq --no-install-recommends ${redis.debian}`;
    expect(calls(log)).toEqual([
      'sudo -n true',
      `${sudo} update -qq`,
      'apt-get update -qq DEBIAN_FRONTEND=noninteractive',
      `${sudo} ${apt}`,
      `apt-get ${apt} DEBIAN_FRONTEND=noninteractive`,
    ]);
    expect(result).toMatchObject({ code: 0, stderr: '' });
  });

  it('a component that is there: apt-get is never called, nothing printed', async () => {
    const { path, log } = makeMachine({ uid: 0, aptGet: 'provides', present: components.map((c) => c.command) });
    expect(await setup(path)).toEqual({ code: 0, stdout: '', stderr: '' });
    expect(calls(log)).toEqual([]);
  });

  it('not root and no sudo: one line per missing component with the command to run as root, exit 1, nothing installed', async () => {
    const { path, log } = makeMachine({ uid: 1000, aptGet: 'provides', present: [] });
    const result = await setup(path);
    expect(result.code).toBe(1);
    expect(result.stdout).toBe('');
    expect(result.stderr.split('\n').filter(Boolean)).toEqual(
      components.map(
        (c) =>
          `test setup: ${c.command} is missing (${c.component}); not root and no sudo: as root, run \`apt-get install -y --no-install-recommends ${c.debian}\``,
      ),
    );
    expect(calls(log)).toEqual([]);
  });

  it('sudo that asks for a password is not waited for: the sudo command to run, exit 1, nothing installed', async () => {
    const { path, log } = makeMachine({ uid: 1000, sudo: 'password', aptGet: 'provides', present: others });
    const result = await setup(path);
    expect(result.code).toBe(1);
    expect(result.stderr).toBe(
      `test setup: ${redis.command} is missing (${redis.component}); sudo asks for a password: run \`sudo apt-get install -y --no-install-recommends ${redis.debian}\`\n`,
    );
    expect(calls(log)).toEqual(['sudo -n true']);
  });

  it('no apt-get (not Debian): names the command elsewhere and on Debian/Ubuntu, exit 1', async () => {
    const { path } = makeMachine({ uid: 0, present: others });
    const result = await setup(path);
    expect(result.code).toBe(1);
    expect(result.stderr).toBe(
      `test setup: ${redis.command} is missing (${redis.component}); install it yourself: \`${redis.elsewhere}\`, or on Debian/Ubuntu \`apt-get install ${redis.debian}\`\n`,
    );
  });

  it('apt-get fails: its reason in the one line, exit 1', async () => {
    const { path } = makeMachine({ uid: 0, aptGet: 'fails', present: others });
    const result = await setup(path);
    expect(result.code).toBe(1);
    expect(result.stderr).toBe(
      `test setup: ${redis.command} is missing (${redis.component}); apt-get could not install ${redis.debian} (E: Unable to locate package ${redis.debian}): install it yourself (\`${redis.elsewhere}\` elsewhere) and run npm test again\n`,
    );
  });

  it('the package still missing after apt-get: `npm test` ends with the one line and runs no test', async () => {
    const { path, log } = makeMachine({ uid: 0, aptGet: 'provides nothing', present: others });
    const ran = join(path, 'ran.log');
    shim(path, 'npm', `echo "npm $*" >> ${ran}`);
    shim(path, 'vitest', `echo "vitest $*" >> ${ran}`);
    const scripts = (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string> }).scripts;
    const result = await run('/bin/sh', ['-c', scripts.test!], path);
    expect(calls(log)).toHaveLength(2);
    expect(result.code).toBe(1);
    expect(result.stderr).toBe(
      `test setup: ${redis.command} is missing (${redis.component}); apt-get installed ${redis.debian} but it is not on PATH: install it yourself (\`${redis.elsewhere}\` elsewhere) and run npm test again\n`,
    );
    expect(existsSync(ran)).toBe(false);
  });
});
