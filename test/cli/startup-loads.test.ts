import { spawnSync } from 'node:child_process';
import { copyFileSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { capturedIo } from '../../src/app/io.js';
import { buildProgram, commandCalled } from '../../src/cli/program.js';
import { fileURLToPath } from 'node:url';
import { cachedScript } from '../../src/util/cached-script.js';
import { loadProgram } from '../../src/cli/load-program.js';
import { CLI, tempDir } from '../helpers/cli.js';
import { loadedFrom, loadHookFlags, UNBUNDLED_CLI } from '../helpers/loaded.js';

/** The files a command's process loads: module by module (UNBUNDLED_CLI), or the packages its bundle requires (CLI). */
function loadedBy(args: string[], cli = UNBUNDLED_CLI): string[] {
  const result = spawnSync(process.execPath, [...loadHookFlags(), cli, ...args], { encoding: 'utf8', env: { PATH: process.env.PATH, SITEFLEET_TOKEN: 't' } });
  expect(result.status, result.stderr).toBe(0);
  return loadedFrom(result.stderr);
}

/**
 * `validate` runs in every pre-commit hook and CI step: it loads no HTTP client, logger, queue or
 * prompt, which only commands that talk to the service need (each loads its code when it is called).
 */
describe('what validate loads', () => {
  it('no undici, pino, p-queue, readline prompt or runtime', () => {
    const loaded = loadedBy(['validate', 'playbooks/php-staging.yaml']);
    expect(loaded.some((url) => url.endsWith('/dist/playbook/load.js'))).toBe(true);
    for (const heavy of ['/node_modules/undici/', '/node_modules/pino/', '/node_modules/p-queue/', 'node:readline', '/dist/app/runtime.js'])
      expect(loaded.filter((url) => url.includes(heavy))).toEqual([]);
  });

  it('bundled, as users run it: the validators’ runtime and no package a run needs', () => {
    const packages = loadedBy(['validate', 'playbooks/php-staging.yaml'], CLI).filter((url) => url.includes('/node_modules/'));
    // The hook sees what the bundle requires: the built validators' runtime, from ajv.
    expect(packages.some((url) => url.includes('/node_modules/ajv/'))).toBe(true);
    for (const heavy of ['/undici/', '/pino/', '/ioredis/', '/playwright-core/', '/pngjs/']) expect(packages.filter((url) => url.includes(heavy))).toEqual([]);
  });

  it('the bundle is read with the code cache the build made of it (not compiled again at each start), and only with its own text', () => {
    const bundle = fileURLToPath(new URL('../../dist/bin/program.cjs', import.meta.url));
    // Undefined when no cache is used, true when V8 refuses it.
    expect(cachedScript(bundle).script.cachedDataRejected).toBe(false);
    // An edit of the same length (V8 checks no more): the old compiled code would run; the cache is not used.
    const dir = tempDir();
    const text = readFileSync(bundle, 'utf8');
    expect(text).toContain('pino log level');
    writeFileSync(join(dir, 'program.cjs'), text.replace('pino log level', 'PINO log level'));
    copyFileSync(`${bundle}.v8`, join(dir, 'program.cjs.v8'));
    expect(cachedScript(join(dir, 'program.cjs')).script.cachedDataRejected).toBeUndefined();
  });
});

/** Each command's module, and what it loads to declare its flags, loads only when it is the one called. */
describe('the command a line calls', () => {
  it('is read past the global options and their values; when it is not plain, every command is there', async () => {
    const program = await buildProgram(capturedIo());
    expect(program.commands.map((c) => c.name())).toContain('sim');
    expect(commandCalled(program, ['validate', 'x.yaml'])).toBe('validate');
    expect(commandCalled(program, ['--base-url', 'run', '-q', 'plan', 'x.yaml'])).toBe('plan');
    expect(commandCalled(program, ['--log-level=silent', 'status', 'r.json'])).toBe('status');
    for (const args of [['--help'], ['help', 'run'], ['validat'], ['--nonsense', 'run'], [], ['--base-url']])
      expect(commandCalled(program, args), args.join(' ')).toBeUndefined();
  });

  it('validate loads no other command, no simulator, no run outputs and no progress watcher', () => {
    const loaded = loadedBy(['validate', 'playbooks/php-staging.yaml']);
    for (const other of [
      '/dist/cli/commands/run.js',
      '/dist/cli/commands/sim.js',
      '/dist/sim/',
      '/dist/app/finish-run.js',
      '/dist/app/outputs/',
      '/dist/run/watcher.js',
    ])
      expect(loaded.filter((url) => url.includes(other))).toEqual([]);
  });
});

describe('a package without its bundle', () => {
  it('says so in one line that names the file and what to do', () => {
    const missing = join(tempDir(), 'program.cjs');
    expect(loadProgram(missing)).toEqual({
      missing: `${missing} is missing: this installation of sitefleet is incomplete (install it again, or run npm run build in a checkout); nothing was sent`,
    });
  });
});
