import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * vitest's global setup: the tests that start the CLI as a process run its bundle (dist/bin/), the
 * in-process ones dist/'s modules. A `tsc` alone rewrites the modules, not the bundle, and the two
 * would test different code: the suite refuses to start until `npm run build` (or `npm run typecheck`).
 */
export default function bundleIsCurrent(): void {
  const dist = fileURLToPath(new URL('../dist/', import.meta.url));
  const bundle = join(dist, 'bin', 'program.cjs');
  const built = statSync(bundle, { throwIfNoEntry: false })?.mtimeMs;
  const newer = modules(dist).find((file) => statSync(file).mtimeMs > (built ?? 0));
  if (built === undefined || newer !== undefined)
    throw new Error(`${bundle} is ${built === undefined ? 'missing' : `older than ${newer}`}: run npm run build (or npm run typecheck) before the tests`);
}

function modules(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? (e.name === 'bin' ? [] : modules(join(dir, e.name))) : e.name.endsWith('.js') ? [join(dir, e.name)] : [],
  );
}
