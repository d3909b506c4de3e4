import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { cachedScript } from '../util/cached-script.js';
import type * as Entry from './program-entry.js';

/** The program as the build bundled it: program-entry.ts and all it loads, our code, yaml and commander. */
export const PROGRAM_BUNDLE = fileURLToPath(new URL('../bin/program.cjs', import.meta.url));

/**
 * The program, from its bundle, compiled with V8's code cache (cachedScript). Loaded as separate
 * modules, a start resolves, reads and compiles some 150 of ours and yaml's 74 CommonJS files, and
 * `sitefleet validate` cost ~215 ms over a bare `node` start (issue 56; bench scenario 31). The
 * bundle is made by every build (`npm run build`, `npm run typecheck`), and a package without it is
 * broken: it is said in one line (main.ts), not worked around.
 */
export function loadProgram(bundle = PROGRAM_BUNDLE): typeof Entry | { missing: string } {
  if (!existsSync(bundle))
    return {
      missing: `${bundle} is missing: this installation of sitefleet is incomplete (install it again, or run npm run build in a checkout); nothing was sent`,
    };
  return cachedScript(bundle).load() as typeof Entry;
}
