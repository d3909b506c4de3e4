import { spawn } from 'node:child_process';
import { accessSync, constants, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { SitefleetError, UsageError } from '../errors.js';

/** The names Chromium goes by on PATH (Debian's package, Ubuntu's, Google's builds). */
const NAMES = ['chromium', 'chromium-browser', 'google-chrome', 'google-chrome-stable'];
/** A page of 10,000 steps prints in seconds; a browser that takes this long is stuck. */
const PRINT_TIMEOUT_MS = 120_000;

/**
 * The flags every headless Chromium sitefleet starts gets (`--pdf` here, the tests' browser too):
 * no GPU, no sandbox (it runs as root in CI containers), and nothing that would call out on its own
 * (updates, sync, QUIC, first-run pages).
 */
export const CHROMIUM_FLAGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

function isExecutable(path: string): boolean {
  try {
    accessSync(path, constants.X_OK);
    return statSync(path).isFile();
  } catch {
    return false;
  }
}

/** `SITEFLEET_CHROMIUM`, else the first Chromium on PATH; exit 2 naming what to install when there is none. */
export function findChromium(env: Record<string, string | undefined>): string {
  const named = env.SITEFLEET_CHROMIUM;
  if (named !== undefined && named !== '') {
    if (!isExecutable(named)) throw new UsageError(`--pdf: SITEFLEET_CHROMIUM=${named} is not an executable file`);
    return named;
  }
  const dirs = (env.PATH ?? '').split(delimiter).filter(Boolean);
  for (const name of NAMES) for (const dir of dirs) if (isExecutable(join(dir, name))) return join(dir, name);
  throw new UsageError(
    `--pdf needs Chromium and none was found (${NAMES.join(', ')} on PATH, or SITEFLEET_CHROMIUM): install it (Debian/Ubuntu: apt-get install chromium; macOS: brew install --cask chromium), or use --html alone`,
  );
}

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
