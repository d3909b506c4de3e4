import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { tempDir } from './cli.js';

/**
 * The node flags that make a process say every module it loads (a resolve hook registered before the
 * CLI starts, writing `LOADED <url>` on stderr): what a command costs at start-up is what it loads,
 * so these tests need a process of their own.
 */
export function loadHookFlags(): string[] {
  const dir = tempDir();
  const hooks = join(dir, 'hooks.mjs');
  writeFileSync(hooks, 'export async function resolve(s, c, next) { const r = await next(s, c); process.stderr.write(`LOADED ${r.url}\\n`); return r; }\n');
  const register = join(dir, 'register.mjs');
  writeFileSync(register, `import { register } from 'node:module';\nregister(${JSON.stringify(pathToFileURL(hooks).href)});\n`);
  return ['--import', pathToFileURL(register).href];
}

/** The modules a process with loadHookFlags said it loaded. */
export function loadedFrom(stderr: string): string[] {
  return stderr.split('\n').flatMap((line) => (line.startsWith('LOADED ') ? [line.slice(7)] : []));
}
