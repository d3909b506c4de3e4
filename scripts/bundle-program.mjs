// Writes dist/bin/program.cjs: the program (dist/cli/program-entry.js and all it imports, with yaml,
// commander, picomatch and the ES-only p-queue and pixelmatch) in one CommonJS file, and beside it V8's code cache
// once it has run `validate` and `--help` on the example playbooks (src/cli/load-program.ts says why).
// Run by `npm run build` and `npm run typecheck`, after tsc and the validators.
import { readFileSync, readdirSync, rmSync } from 'node:fs';
import { relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const root = fileURLToPath(new URL('..', import.meta.url));
const out = fileURLToPath(new URL('../dist/bin/program.cjs', import.meta.url));
// Loaded where it lies, when first used: a worker's file (pino), a browser (playwright-core), or
// CommonJS that only some commands run. Each is a require() in the bundle, resolved as before.
const external = ['ajv', 'ajv-formats', 'pino', 'undici', 'ioredis', 'playwright-core', 'pngjs'];

// A cache of the bundle before this one must never be read with it (nor the bundle alone with an old cache).
rmSync(`${out}.v8`, { force: true });
const result = await build({
  entryPoints: [fileURLToPath(new URL('../dist/cli/program-entry.js', import.meta.url))],
  outfile: out,
  bundle: true,
  format: 'cjs',
  platform: 'node',
  target: 'node20',
  external,
  // import() of a package loaded on use (playwright-core, ioredis: CommonJS both) becomes require(): a
  // vm Script's import() goes to no loader (Node 20's main-context loader is experimental, and warns).
  supported: { 'dynamic-import': false },
  // Every module sees the bundle's own URL: all that read it lie two folders down, as dist/bin/ does.
  define: { 'import.meta.url': '__sitefleetBundleUrl' },
  banner: { js: "const __sitefleetBundleUrl = require('node:url').pathToFileURL(__filename).href;" },
  metafile: true,
  // The metafile's paths are from the repository's root wherever the build is started from.
  absWorkingDir: root,
  // A class's own name, as its code and messages read it (constructor.name), not one esbuild chose apart from another's.
  keepNames: true,
  logLevel: 'warning',
});
// The modules that read import.meta.url, each checked to find only what lies two folders up or in a
// sibling of its folder reached by '../' (the same from dist/util/ as from dist/bin/). A new one fails
// the build until its paths are checked, and it is added here.
const READS_ITS_URL = new Set([
  'util/json-input',
  'util/validators',
  'util/version',
  'util/ajv',
  'util/ajv-runtime',
  'util/package-files',
  'api/request-schemas',
]);
for (const input of Object.keys(result.metafile.inputs)) {
  const name = /^dist\/(.+)\.js$/.exec(input)?.[1];
  if (name === undefined || READS_ITS_URL.has(name)) continue;
  if (readFileSync(new URL(`../${input}`, import.meta.url), 'utf8').includes('import.meta'))
    throw new Error(
      `${input} reads import.meta.url, which the bundle gives as dist/bin/'s: find its files from src/util/package-files.ts, or check its paths and add it to READS_ITS_URL`,
    );
}

// What the cache holds is what has been compiled: what `validate` and `--help` run, start-up's commands.
const { cachedScript } = await import('../dist/util/cached-script.js');
const { load, keep } = cachedScript(out);
const { main, capturedIo } = load();
const examples = fileURLToPath(new URL('../playbooks/', import.meta.url));
for (const file of readdirSync(examples).filter((f) => f.endsWith('.yaml'))) await main(['validate', `${examples}/${file}`], capturedIo({ env: {} }));
await main(['--help'], capturedIo({ env: {} }));
keep();
process.stdout.write(`bundled ${relative(root, out)} (${Math.round(readFileSync(out).length / 1024)} kB)\n`);
