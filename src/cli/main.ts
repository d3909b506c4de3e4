#!/usr/bin/env node
import { readFileSync } from 'node:fs';
import { loadProgram } from './load-program.js';

// `sitefleet --version` answers before anything else loads: scripts and doctors call it to check an
// install, and pay the start-up. Everything else goes through the program (program.ts), from its bundle (load-program.ts).
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
  const program = loadProgram();
  if ('missing' in program) {
    process.stderr.write(`sitefleet: ${program.missing}\n`);
    process.exitCode = 1; // as any unexpected error (report-error.ts)
  } else {
    process.exitCode = await program.main(args, program.processIo());
    exitIfLeftOpen();
  }
}

/**
 * A command has closed all it opened once `main` returns (its RunScope), and the process ends by
 * itself. Something a defect left open (a server, a child, a timer) must not keep a cron job from the
 * exit code its summary gave: after a bound, what is still open is named and the process ends with its
 * code. The timer holds nothing open itself; a process that ends by itself never sees it.
 */
function exitIfLeftOpen(): void {
  const boundMs = 2000;
  setTimeout(() => {
    const open = new Map<string, number>();
    for (const kind of process.getActiveResourcesInfo()) open.set(kind, (open.get(kind) ?? 0) + 1);
    const named = [...open].map(([kind, n]) => (n > 1 ? `${kind} ×${n}` : kind)).join(', ');
    process.stderr.write(`sitefleet: warning: still open ${boundMs / 1000} s after the command ended (${named}): exiting with its code ${process.exitCode}\n`);
    process.exit();
  }, boundMs).unref();
}
