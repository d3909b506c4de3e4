import { spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { CLI, tempDir } from '../helpers/cli.js';

/** The files a command's process loads, as a module hook (registered before the CLI starts) sees them resolved. */
function loadedBy(args: string[]): string[] {
  const dir = tempDir();
  const hooks = join(dir, 'hooks.mjs');
  writeFileSync(hooks, 'export async function resolve(s, c, next) { const r = await next(s, c); process.stderr.write(`LOADED ${r.url}\\n`); return r; }\n');
  const register = join(dir, 'register.mjs');
  writeFileSync(register, `import { register } from 'node:module';\nregister(${JSON.stringify(pathToFileURL(hooks).href)});\n`);
  const result = spawnSync(process.execPath, ['--import', pathToFileURL(register).href, CLI, ...args], {
    encoding: 'utf8',
    env: { PATH: process.env.PATH, SITEFLEET_TOKEN: 't' },
  });
  expect(result.status, result.stderr).toBe(0);
  return result.stderr.split('\n').flatMap((line) => (line.startsWith('LOADED ') ? [line.slice(7)] : []));
}

/**
 * `validate` runs in every pre-commit hook and CI step: it loads no HTTP client, logger, queue or
 * prompt, which only commands that talk to the service need (each loads its code when it is called).
 */
describe('what validate loads', () => {
  it('no undici, pino, p-queue, readline prompt or runtime', () => {
    const loaded = loadedBy(['validate', 'playbooks/php-staging.yaml']);
    expect(loaded.some((url) => url.endsWith('/dist/playbook/load.js'))).toBe(true);
    for (const heavy of ['/node_modules/undici/', '/node_modules/pino/', '/node_modules/p-queue/', 'node:readline', '/dist/app/context.js'])
      expect(loaded.filter((url) => url.includes(heavy))).toEqual([]);
  });
});
