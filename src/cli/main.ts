#!/usr/bin/env node
import { readFileSync } from 'node:fs';

// `sitefleet --version` answers before anything else loads: scripts and doctors call it to check an
// install, and pay the start-up. Everything else goes through the program (program.ts).
const args = process.argv.slice(2);
if (args.length === 1 && (args[0] === '--version' || args[0] === '-V')) {
  const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string };
  process.stdout.write(`${pkg.version}\n`);
} else {
  const { main } = await import('./program.js');
  await main();
}
