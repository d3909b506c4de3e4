import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { CLI } from '../helpers/cli.js';
import { loadedFrom, loadHookFlags } from '../helpers/loaded.js';

/** The files a command's process loads. */
function loadedBy(args: string[]): string[] {
  const result = spawnSync(process.execPath, [...loadHookFlags(), CLI, ...args], { encoding: 'utf8', env: { PATH: process.env.PATH, SITEFLEET_TOKEN: 't' } });
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
});
