import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { InterruptedError, SitefleetError } from '../errors.js';
import type { Signals } from './io.js';
import { CHROMIUM_FLAGS, NO_SANDBOX } from '../util/chromium.js';

/** A page of 10,000 steps prints in seconds; a browser that takes this long is stuck. */
const PRINT_TIMEOUT_MS = 120_000;

/** `signals`: the command's (io.signals), passed on to the browser; `timeoutMs`: how long a stuck browser is given. */
export interface PrintOptions {
  signals?: Signals;
  timeoutMs?: number;
}

/**
 * Prints a page to PDF (A4, the page's own print style) with a Chromium of the machine's, in a fresh
 * profile folder of its own that is removed after. The page is a file in that folder: it loads
 * nothing, so the browser needs no network.
 */
export async function printPdf(chromium: string, page: string, options: PrintOptions = {}): Promise<Buffer> {
  const dir = mkdtempSync(join(tmpdir(), 'sitefleet-pdf-'));
  try {
    const htmlFile = join(dir, 'page.html');
    const pdfFile = join(dir, 'page.pdf');
    writeFileSync(htmlFile, page, { mode: 0o600 });
    const args = [
      ...CHROMIUM_FLAGS,
      // sitefleet's own page, a file, loading nothing: run where the sandbox cannot (root in CI), as before.
      NO_SANDBOX,
      `--user-data-dir=${join(dir, 'profile')}`,
      '--no-pdf-header-footer',
      `--print-to-pdf=${pdfFile}`,
      pathToFileURL(htmlFile).href,
    ];
    await runToEnd(chromium, args, options);
    const pdf = readFileSync(pdfFile);
    if (!pdf.subarray(0, 5).equals(Buffer.from('%PDF-'))) throw new SitefleetError(`--pdf: ${chromium} wrote no PDF`);
    return pdf;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') throw new SitefleetError(`--pdf: ${chromium} wrote no PDF`);
    throw error;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** The signals that end a command: each is passed on to the browser's group, which hears none of them itself. */
const ENDING = ['SIGINT', 'SIGTERM', 'SIGHUP'] as const;

/**
 * Runs the browser to its end; its last line of stderr says why when it fails. It runs in a process
 * group (and session) of its own, ended whole: a launcher script that does not exec the browser
 * (Debian's chromium-headless-shell) would die alone, and the browser live on, holding stderr open
 * (so this never ended). A group of its own hears no Ctrl-C, nor the terminal closing: the command's
 * signals are passed on, and the command ends interrupted (exit 130).
 */
function runToEnd(command: string, args: string[], options: PrintOptions): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { stdio: ['ignore', 'ignore', 'pipe'], detached: true });
    let stderr = '';
    let interrupted: NodeJS.Signals | undefined;
    child.stderr.on('data', (d: Buffer) => (stderr = (stderr + d.toString()).slice(-4000)));
    const killAll = () => {
      try {
        if (child.pid !== undefined) process.kill(-child.pid, 'SIGKILL');
      } catch {
        // already gone
      }
    };
    const onSignal = (signal: NodeJS.Signals) => {
      interrupted = signal;
      killAll();
    };
    const timer = setTimeout(killAll, options.timeoutMs ?? PRINT_TIMEOUT_MS);
    for (const signal of ENDING) options.signals?.on(signal, onSignal);
    const ended = () => {
      clearTimeout(timer);
      for (const signal of ENDING) options.signals?.off(signal, onSignal);
    };
    child.on('error', (error) => {
      ended();
      reject(new SitefleetError(`--pdf: could not start ${command}: ${error.message}`));
    });
    child.on('close', (code, signal) => {
      ended();
      if (interrupted) return reject(new InterruptedError(`--pdf: interrupted (${interrupted}): the browser was ended, no PDF written`));
      if (code === 0) return resolve();
      const why = stderr.trim().split('\n').at(-1) ?? '';
      reject(new SitefleetError(`--pdf: ${command} ended with ${signal ?? `exit ${code}`}${why ? `: ${why}` : ''}`));
    });
  });
}
