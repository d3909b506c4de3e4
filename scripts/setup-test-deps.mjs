// The step `npm test` (and .ci/run) takes first: the programs the suite starts, listed in
// test-components.json, are looked for on PATH and the missing ones installed from Debian's packages
// when this machine allows it (apt-get, as root or with passwordless sudo). Otherwise one line per
// missing program says what to run, and the exit code is 1: `npm test` stops before any test, instead
// of a stack of failing ones. When everything is there it starts no process and prints nothing.
import { spawnSync } from 'node:child_process';
import { accessSync, constants, readFileSync, statSync } from 'node:fs';
import { delimiter, join } from 'node:path';

const components = JSON.parse(readFileSync(new URL('./test-components.json', import.meta.url), 'utf8'));
const aptInstall = ['install', '-y', '-qq', '--no-install-recommends'];

/** Whether an executable file of that name is on PATH: looked at, not run, so the step stays cheap. */
function onPath(command) {
  return (process.env.PATH ?? '')
    .split(delimiter)
    .filter(Boolean)
    .some((dir) => {
      try {
        accessSync(join(dir, command), constants.X_OK);
        return statSync(join(dir, command)).isFile();
      } catch {
        return false;
      }
    });
}

function run(command, args) {
  return spawnSync(command, args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' } });
}

/**
 * How apt-get may run here: `{ prefix }` to put before it, or `{ manual }`, the command a person should run.
 * `id -u` rather than process.getuid(): the test plays root or not with its own `id` on PATH.
 */
function installer() {
  if (!onPath('apt-get')) return { manual: (c) => `install it yourself: \`${c.elsewhere}\`, or on Debian/Ubuntu \`apt-get install ${c.debian}\`` };
  if (run('id', ['-u']).stdout?.trim() === '0') return { prefix: [] };
  if (!onPath('sudo')) return { manual: (c) => `not root and no sudo: as root, run \`apt-get install -y --no-install-recommends ${c.debian}\`` };
  // sudo resets the environment: `env` carries DEBIAN_FRONTEND through it.
  if (run('sudo', ['-n', 'true']).status === 0) return { prefix: ['sudo', '-n', 'env', 'DEBIAN_FRONTEND=noninteractive'] };
  return { manual: (c) => `sudo asks for a password: run \`sudo apt-get install -y --no-install-recommends ${c.debian}\`` };
}

/** Runs apt-get quietly; on failure, why in one line: its last error (`E: ...`), else its last words. */
function aptGet(prefix, args) {
  const [command, ...rest] = [...prefix, 'apt-get', ...args];
  const result = run(command, rest);
  const lines = `${result.stdout ?? ''}\n${result.stderr ?? ''}\n${result.error?.message ?? ''}`.split('\n').map((l) => l.trim());
  const why = lines.findLast((l) => l.startsWith('E:')) ?? lines.findLast(Boolean) ?? `exit ${result.status}`;
  return { ok: result.status === 0, why };
}

/** Installs each missing package, one line each; answers why a package failed, by package. */
function install(prefix, missing) {
  const failed = new Map();
  const update = aptGet(prefix, ['update', '-qq']);
  for (const debian of new Set(missing.map((c) => c.debian))) {
    process.stdout.write(`test setup: installing ${debian} (Debian package) with apt-get\n`);
    const result = aptGet(prefix, [...aptInstall, debian]);
    if (!result.ok) failed.set(debian, update.ok ? result.why : `${result.why}; apt-get update: ${update.why}`);
  }
  return failed;
}

function stop(missing, why) {
  for (const c of missing) process.stderr.write(`test setup: ${c.command} is missing (${c.component}); ${why(c)}\n`);
  process.exit(1);
}

const missing = components.filter((c) => !onPath(c.command));
if (missing.length > 0) {
  const how = installer();
  if (how.manual) stop(missing, how.manual);
  const failed = install(how.prefix, missing);
  const still = missing.filter((c) => !onPath(c.command));
  if (still.length > 0) {
    stop(still, (c) => {
      const outcome = failed.has(c.debian)
        ? `apt-get could not install ${c.debian} (${failed.get(c.debian)})`
        : `apt-get installed ${c.debian} but it is not on PATH`;
      return `${outcome}: install it yourself (\`${c.elsewhere}\` elsewhere) and run npm test again`;
    });
  }
}
