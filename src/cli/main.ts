#!/usr/bin/env node
import { readFileSync } from 'node:fs';

// `sitefleet --version` answers before anything else loads: scripts and doctors call it to check an
// install, and pay the start-up. Everything else goes through the program (program.ts).
const args = process.argv.slice(2);
if (args.length === 1 && (args[0] === '--version' || args[0] === '-V')) {
  const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string };
  process.stdout.write(`${pkg.version}\n`);
} else {
  // `sitefleet inventory --format json | head`: the reader left; what it did not read it did not want.
  process.stdout.on('error', (error: NodeJS.ErrnoException) => {
    if (error.code === 'EPIPE') process.exit(0);
    throw error;
  });
  const [{ main }, { processIo }] = await Promise.all([import('./program.js'), import('../app/io.js')]);
  process.exitCode = await main(args, processIo());
}
