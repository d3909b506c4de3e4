import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { tempDir } from './cli.js';

/** The CLI from its separate modules, not its bundle (unbundled-cli.mjs says why). */
export const UNBUNDLED_CLI = fileURLToPath(new URL('./unbundled-cli.mjs', import.meta.url));

/**
 * The node flags that make a process say every module it loads, `LOADED <url>` on stderr: a resolve
 * hook registered before the CLI starts, for ES modules and import(), and a wrap of CommonJS's loader,
 * for require() (the bundle's, and a package's own): what a command costs at start-up is what it loads,
 * so these tests need a process of their own.
 */
export function loadHookFlags(): string[] {
  const dir = tempDir();
  const hooks = join(dir, 'hooks.mjs');
  writeFileSync(hooks, 'export async function resolve(s, c, next) { const r = await next(s, c); process.stderr.write(`LOADED ${r.url}\\n`); return r; }\n');
  const register = join(dir, 'register.mjs');
  writeFileSync(register, `import { register } from 'node:module';\nregister(${JSON.stringify(pathToFileURL(hooks).href)});\n`);
  const required = join(dir, 'required.cjs');
  writeFileSync(required, REQUIRE_HOOK);
  return ['--import', pathToFileURL(register).href, '--require', required];
}

const REQUIRE_HOOK = `const Module = require('node:module');
const { pathToFileURL } = require('node:url');
const load = Module._load;
Module._load = function (request, parent, isMain) {
  const exports = load.apply(this, arguments);
  const file = Module.isBuiltin(request) ? request : Module._resolveFilename(request, parent, isMain);
  process.stderr.write('LOADED ' + (Module.isBuiltin(request) ? file : pathToFileURL(file).href) + '\\n');
  return exports;
};
`;

/** The modules a process with loadHookFlags said it loaded. */
export function loadedFrom(stderr: string): string[] {
  return stderr.split('\n').flatMap((line) => (line.startsWith('LOADED ') ? [line.slice(7)] : []));
}
