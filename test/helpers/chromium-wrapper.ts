import { chmodSync, existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { findChromium } from '../../src/util/chromium.js';
import { tempDir } from './cli.js';

/** The machine's Chromium behind a script of the test's: it can be killed mid-run, and refuse to start again. */
export interface WrappedChromium {
  /** What SITEFLEET_CHROMIUM names. */
  path: string;
  /** How many times the browser was started. */
  starts(): number;
  /** SIGKILLs the browser started last, and every process of it (as the OOM killer does). */
  kill(): void;
  /** From now on the browser does not start (exit 1, a line on stderr). */
  refuse(): void;
}

export function wrappedChromium(): WrappedChromium {
  const dir = tempDir();
  const path = join(dir, 'chromium');
  const real = findChromium(process.env);
  writeFileSync(
    path,
    `#!/bin/sh\nif [ -e "${dir}/refuse" ]; then echo "chromium: refused to start (test)" >&2; exit 1; fi\necho $$ >> "${dir}/pids"\nexec "${real}" "$@"\n`,
  );
  chmodSync(path, 0o755);
  const pids = () => (existsSync(join(dir, 'pids')) ? readFileSync(join(dir, 'pids'), 'utf8').trim().split('\n').map(Number) : []);
  return {
    path,
    starts: () => pids().length,
    // The whole process group playwright started it in: Debian's chromium-headless-shell is a script that
    // does not exec the browser, so its pid is the shell's, and the browser would outlive it.
    kill: () => process.kill(-pids().at(-1)!, 'SIGKILL'),
    refuse: () => writeFileSync(join(dir, 'refuse'), ''),
  };
}
