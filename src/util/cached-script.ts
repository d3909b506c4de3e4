import { createHash } from 'node:crypto';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname } from 'node:path';
import { Script } from 'node:vm';

/** A CommonJS file compiled, not yet run, and what runs it once: its `module.exports`. */
export interface CachedScript {
  script: Script;
  load: () => unknown;
  /** Writes V8's cache of what has been compiled so far beside the file, bound to its text (the build's step). */
  keep: () => void;
}

/** The length of a cache's header: the SHA-256 of the source it was made from, in hex. */
const HEADER = 64;

/**
 * A CommonJS file compiled as Node's own loader would (the same five names in scope), with V8's code
 * cache the build wrote beside it (`<file>.v8`, made once the code had run, so it holds the functions
 * that run used). Node 20 keeps no code cache of its own for modules: without one, every start
 * compiles again what it runs. V8 checks a cache against its source's length only: one edit of the
 * same length (a hot-fix in an install) would run the old compiled code, so the cache carries its
 * source's hash and is used only on that source (~3 ms for the program's 1.5 MB). A cache another
 * node version or other V8 flags made is rejected by V8, and the file is compiled as without one.
 * Synchronous, so a validator can be made in the middle of a load.
 */
export function cachedScript(file: string): CachedScript {
  const cacheFile = `${file}.v8`;
  const text = readFileSync(file, 'utf8');
  const hash = createHash('sha256').update(text).digest('hex');
  const cache = existsSync(cacheFile) ? readFileSync(cacheFile) : undefined;
  const cachedData = cache && cache.subarray(0, HEADER).toString('latin1') === hash ? cache.subarray(HEADER) : undefined;
  const source = `(function (exports, require, module, __filename, __dirname) {${text}\n})`;
  // It has no import(): Node 20 gives a Script no loader for it (scripts/bundle-program.mjs makes each a require()).
  const script = new Script(source, { filename: file, ...(cachedData ? { cachedData } : {}) });
  const load = () => {
    const module = { exports: {} as unknown };
    type Wrapper = (e: unknown, r: NodeJS.Require, m: { exports: unknown }, f: string, d: string) => void;
    (script.runInThisContext() as Wrapper)(module.exports, createRequire(file), module, file, dirname(file));
    return module.exports;
  };
  const keep = () => writeFileSync(cacheFile, Buffer.concat([Buffer.from(hash, 'latin1'), script.createCachedData()]));
  return { script, load, keep };
}
