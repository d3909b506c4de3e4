import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { SitefleetError } from '../errors.js';
import { CHROMIUM_FLAGS, NO_SANDBOX } from '../util/chromium.js';

/** A page of 10,000 steps prints in seconds; a browser that takes this long is stuck. */
const PRINT_TIMEOUT_MS = 120_000;

/**
 * Prints a page to PDF (A4, the page's own print style) with a Chromium of the machine's, in a fresh
 * profile folder of its own that is removed after. The page is a file in that folder: it loads
 * nothing, so the browser needs no network.
 */
export async function printPdf(chromium: string, page: string): Promise<Buffer> {
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
    await runToEnd(chromium, args);
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

/** Runs the browser to its end; its last line of stderr says why when it fails. */
function runToEnd(command: string, args: string[]): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => (stderr = (stderr + d.toString()).slice(-4000)));
    const timer = setTimeout(() => child.kill('SIGKILL'), PRINT_TIMEOUT_MS);
    child.on('error', (error) => {
      clearTimeout(timer);
      reject(new SitefleetError(`--pdf: could not start ${command}: ${error.message}`));
    });
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      if (code === 0) return resolve();
      const why = stderr.trim().split('\n').at(-1) ?? '';
      reject(new SitefleetError(`--pdf: ${command} ended with ${signal ?? `exit ${code}`}${why ? `: ${why}` : ''}`));
    });
  });
}
