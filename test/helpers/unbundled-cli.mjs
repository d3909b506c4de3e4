// The CLI as main.ts runs it, from the separate modules tsc wrote (dist/cli/program-entry.js and all
// it imports) rather than their bundle: what a command loads, module by module, shows only here. The
// bundle keeps the same lazy boundaries (esbuild wraps a module reached only by import() to run when
// imported); test/cli/startup-loads.test.ts holds the bundle to what it requires.
const { main, processIo } = await import(new URL('../../dist/cli/program-entry.js', import.meta.url).href);
process.exitCode = await main(process.argv.slice(2), processIo());
