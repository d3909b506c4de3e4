import { accessSync, constants, statSync } from 'node:fs';
import { delimiter, join } from 'node:path';
import { UsageError } from '../errors.js';

/**
 * The names Chromium goes by on PATH, the headless shell first: sitefleet only ever runs it headless,
 * and Chromium's headless shell (Debian's package chromium-headless-shell, the same engine without the
 * browser's windows and profile services) shoots a page for about a quarter of the full browser's CPU
 * (36 pages of the simulator's sites: 13 s against 54 s of the machine's CPU); Google's build of it goes
 * by `chrome-headless-shell`. Then the full browser: Debian's package, Ubuntu's, Google's builds.
 */
const NAMES = ['chromium-headless-shell', 'chrome-headless-shell', 'chromium', 'chromium-browser', 'google-chrome', 'google-chrome-stable'];

/**
 * The flags every headless Chromium sitefleet starts gets (`--pdf`, `health.visual`, the tests'
 * browser): no GPU, and nothing that would call out on its own (updates, sync, QUIC, first-run
 * pages). The sandbox stays on: `health.visual` loads customer pages on the machine that holds the
 * API token. NO_SANDBOX is added only where the playbook opts out (settings.visual_sandbox: false)
 * or where the page is a file of sitefleet's own, loaded offline (`--pdf`).
 */
export const CHROMIUM_FLAGS = [
  '--headless',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

/** Chromium without its sandbox: never for customer pages unless the playbook says `settings.visual_sandbox: false`. */
export const NO_SANDBOX = '--no-sandbox';

/** The line a run prints when the playbook turns the sandbox off. */
export const SANDBOX_OFF_WARNING =
  'settings.visual_sandbox: false: customer pages load in Chromium without its sandbox (for root containers only; a page that exploits the browser then runs as this user, beside the API token)';

/**
 * Why Chromium cannot start with its sandbox here, with what to do; undefined when it may. Chromium
 * refuses to run as root with its sandbox; a browser that says so (or finds no usable sandbox) is
 * explained the same way.
 */
export function sandboxProblem(uid: number | undefined, browserSaid = ''): string | undefined {
  const asRoot = uid === 0 || /running as root without --no-sandbox/i.test(browserSaid);
  const none = /no usable sandbox|sandbox.*(failed|not supported)/i.test(browserSaid);
  if (!asRoot && !none) return undefined;
  const why = asRoot ? 'Chromium will not start its sandbox as root' : 'Chromium found no usable sandbox on this machine (user namespaces off?)';
  return `health.visual: ${why}: run sitefleet as an unprivileged user, or in a root container set settings.visual_sandbox: false in the playbook (pages then load unsandboxed)`;
}

/** What asks for the browser, for its messages: `--pdf` (and what to do instead), `health.visual`. */
export interface ChromiumUse {
  what: string;
  /** `use --html alone`: what the user can do without one. */
  instead?: string;
}

export const PDF_USE: ChromiumUse = { what: '--pdf', instead: 'use --html alone' };
export const VISUAL_USE: ChromiumUse = { what: 'health.visual', instead: 'remove health.visual' };

function isExecutable(path: string): boolean {
  try {
    accessSync(path, constants.X_OK);
    return statSync(path).isFile();
  } catch {
    return false;
  }
}

/** Where an executable file of that name is on the environment's PATH, or undefined. */
export function onPath(env: Record<string, string | undefined>, name: string): string | undefined {
  for (const dir of (env.PATH ?? '').split(delimiter).filter(Boolean)) if (isExecutable(join(dir, name))) return join(dir, name);
  return undefined;
}

/** The browser to start, or why there is none (with what to install): looked at, never run. */
export function locateChromium(env: Record<string, string | undefined>, use: ChromiumUse): { path: string } | { problem: string } {
  const named = env.SITEFLEET_CHROMIUM;
  if (named !== undefined && named !== '') {
    return isExecutable(named) ? { path: named } : { problem: `${use.what}: SITEFLEET_CHROMIUM=${named} is not an executable file` };
  }
  for (const name of NAMES) {
    const path = onPath(env, name);
    if (path) return { path };
  }
  return {
    problem: `${use.what} needs Chromium and none was found (${NAMES.join(', ')} on PATH, or SITEFLEET_CHROMIUM): install it (Debian/Ubuntu: apt-get install chromium-headless-shell, or chromium; macOS: brew install --cask chromium)${use.instead ? `, or ${use.instead}` : ''}`,
  };
}

/** `SITEFLEET_CHROMIUM`, else the first Chromium on PATH; exit 2 naming what to install when there is none. */
export function findChromium(env: Record<string, string | undefined>, use: ChromiumUse = PDF_USE): string {
  const found = locateChromium(env, use);
  if ('problem' in found) throw new UsageError(found.problem);
  return found.path;
}
