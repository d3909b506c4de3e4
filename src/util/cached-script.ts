import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname } from 'node:path';
import { Script } from 'node:vm';

/** A CommonJS file compiled, not yet run, and what runs it once: its `module.exports`. */
export interface CachedScript {
  script: Script;
  load: () => unknown;
}

/**
 * A CommonJS file compiled as Node's own loader would (the same five names in scope), with V8's code
 * cache the build wrote beside it (`<file>.v8`, made once the code had run, so it holds the functions
 * that run used). Node 20 keeps no code cache of its own for modules: without one, every start
 * compiles again what it runs. A cache another node version made is rejected by V8, and the file is
 * compiled as without one. The build writes both together and never apart: V8 checks a cache against
 * its source's length, not its text. Synchronous, so a validator can be made in the middle of a load.
 */
export function cachedScript(file: string): CachedScript {
  const cache = `${file}.v8`;
  const source = `(function (exports, require, module, __filename, __dirname) {${readFileSync(file, 'utf8')}\n})`;
  // It has no import(): Node 20 gives a Script no loader for it (scripts/bundle-program.mjs makes each a require()).
  const script = new Script(source, { filename: file, ...(existsSync(cache) ? { cachedData: readFileSync(cache) } : {}) });
  const load = () => {
    const module = { exports: {} as unknown };
    type Wrapper = (e: unknown, r: NodeJS.Require, m: { exports: unknown }, f: string, d: string) => void;
    (script.runInThisContext() as Wrapper)(module.exports, createRequire(file), module, file, dirname(file));
    return module.exports;
  };
  return { script, load };
}
