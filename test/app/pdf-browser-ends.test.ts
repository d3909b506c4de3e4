import { chmodSync, existsSync, readFileSync, writeFileSync } from 'node:fs';
import { EventEmitter } from 'node:events';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { printPdf } from '../../src/app/pdf.js';
import { tempDir } from '../helpers/cli.js';
import { waitFor } from '../helpers/sim.js';

/**
 * A browser behind a launcher script that does not exec it, as Debian's chromium-headless-shell is:
 * here a "browser" that never ends (a sleep the script started), its pid written down. Killing the
 * script alone left it running, holding stderr open, and `--pdf` waiting for it for ever.
 */
function stuckLauncher(): { path: string; started: () => boolean; browserPid: () => number } {
  const dir = tempDir();
  const path = join(dir, 'chromium-headless-shell');
  writeFileSync(path, `#!/bin/sh\nsleep 1000 &\necho $! > "${dir}/pid"\nwait\n`);
  chmodSync(path, 0o755);
  const pid = join(dir, 'pid');
  return { path, started: () => existsSync(pid) && readFileSync(pid, 'utf8').endsWith('\n'), browserPid: () => Number(readFileSync(pid, 'utf8')) };
}

/** Whether a process runs (a zombie waiting to be reaped does not). */
function running(pid: number): boolean {
  if (!existsSync(`/proc/${pid}/stat`)) return false;
  return !/\) Z /.test(readFileSync(`/proc/${pid}/stat`, 'utf8'));
}

describe('--pdf ends the browser it started, launcher script and all', () => {
  it('a browser stuck past the time it is given is killed with its script, and --pdf says so', async () => {
    const launcher = stuckLauncher();
    // Given 2 s: its script has long written the pid by then, on a loaded machine too.
    const printing = printPdf(launcher.path, '<p>page</p>', { timeoutMs: 2000 });
    await waitFor(launcher.started);
    await expect(printing).rejects.toThrow(/--pdf: .* ended with SIGKILL/);
    expect(running(launcher.browserPid())).toBe(false);
  });

  it.each(['SIGINT', 'SIGHUP'] as const)('%s while it prints ends the browser too (its group hears none from the terminal), exit 130', async (signal) => {
    const launcher = stuckLauncher();
    const signals = new EventEmitter();
    const printing = printPdf(launcher.path, '<p>page</p>', { signals, timeoutMs: 60_000 });
    await waitFor(launcher.started);
    signals.emit(signal, signal);
    await expect(printing).rejects.toMatchObject({ exitCode: 130, message: `--pdf: interrupted (${signal}): the browser was ended, no PDF written` });
    expect(running(launcher.browserPid())).toBe(false);
    expect(['SIGINT', 'SIGTERM', 'SIGHUP'].map((s) => signals.listenerCount(s))).toEqual([0, 0, 0]);
  });
});
