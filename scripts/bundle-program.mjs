// Writes dist/bin/program.cjs: the program (dist/cli/program-entry.js and all it imports, with yaml,
// commander, picomatch and the ES-only p-queue and pixelmatch) in one CommonJS file, and beside it V8's code cache
// once it has run `validate` and `--help` on the example playbooks (src/cli/load-program.ts says why).
// Run by `npm run build` and `npm run typecheck`, after tsc and the validators.
import { readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
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
  logLevel: 'warning',
});
for (const input of Object.keys(result.metafile.inputs)) {
  if (!input.startsWith('dist/') || input.split('/').length === 3) continue;
  if (readFileSync(new URL(`../${input}`, import.meta.url), 'utf8').includes('import.meta'))
    throw new Error(
      `${input} reads import.meta.url, which the bundle gives as dist/bin/'s: move what it finds to a module two folders down (src/util/package-files.ts)`,
    );
}

// What the cache holds is what has been compiled: what `validate` and `--help` run, start-up's commands.
const { cachedScript } = await import('../dist/util/cached-script.js');
const { script, load } = cachedScript(out);
const { main, capturedIo } = load();
const examples = fileURLToPath(new URL('../playbooks/', import.meta.url));
for (const file of readdirSync(examples).filter((f) => f.endsWith('.yaml'))) await main(['validate', `${examples}/${file}`], capturedIo({ env: {} }));
await main(['--help'], capturedIo({ env: {} }));
writeFileSync(`${out}.v8`, script.createCachedData());
process.stdout.write(`bundled ${relative(root, out)} (${Math.round(readFileSync(out).length / 1024)} kB)\n`);
