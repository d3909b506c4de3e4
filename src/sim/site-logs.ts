import type { Fleet, SimEnvironment } from './fleet.js';
import type { Culprit } from './sites.js';

/** The log files `GET /sites/environments/{env_id}/logs` reads (real-service-notes.md, "Logs"). */
export const LOG_FILES = ['error', 'access', 'kinsta-cache-perf'] as const;
export type LogFile = (typeof LOG_FILES)[number];
/** The most lines one read returns, as the vendor documents. */
export const MAX_LOG_LINES = 20_000;
/** The most lines kept of each file of an environment: older ones are dropped, as log rotation does. */
export const KEPT_LOG_LINES = 500;

/**
 * Each environment's logs, bounded: the error log gets PHP's fatal error when a broken theme or
 * plugin stops a page, the access log a line for each page request. Times are on the simulator's clock.
 */
export class SiteLogs {
  readonly #files = new Map<string, string[]>();

  constructor(
    private readonly now: () => number,
    private readonly kept = KEPT_LOG_LINES,
  ) {}

  /** The file's last `lines` lines, one string (empty when it has none). */
  tail(envId: string, file: LogFile, lines: number): string {
    return (this.#files.get(`${envId} ${file}`) ?? []).slice(-lines).join('\n');
  }

  /** A page request, as nginx's combined format writes it. */
  access(env: SimEnvironment, path: string, status: number, bytes: number): void {
    const { day, month, year, time } = when(this.now());
    const stamp = `${day}/${month}/${year}:${time} +0000`;
    this.#append(env.id, 'access', [`127.0.0.1 - - [${stamp}] "GET ${path} HTTP/1.1" ${status} ${bytes} "-" "Mozilla/5.0"`]);
  }

  /** PHP's fatal error for a page a broken item (or core) stopped: it names the file, as the notes say it does. */
  fatal(fleet: Fleet, env: SimEnvironment, culprit: Culprit): void {
    const site = fleet.sites.get(env.siteId);
    const root = `/www/${(site?.displayName ?? 'site').toLowerCase().replace(/[^a-z0-9]+/g, '')}_${parseInt(env.siteId.slice(0, 6), 16) % 1000}/public`;
    const { file: path, fn } = fatalAt(culprit);
    const file = `${root}/${path}`;
    const { day, month, year, time } = when(this.now());
    const stamp = `${day}-${month}-${year} ${time} UTC`;
    this.#append(env.id, 'error', [
      `[${stamp}] PHP Fatal error:  Uncaught Error: Call to undefined function ${fn}() in ${file}:123`,
      'Stack trace:',
      `#0 ${root}/wp-settings.php(545): include_once()`,
      `#1 ${root}/wp-config.php(98): require_once('${root}/wp-settings.php')`,
      '#2 {main}',
      `  thrown in ${file} on line 123`,
    ]);
  }

  #append(envId: string, file: LogFile, lines: string[]): void {
    const key = `${envId} ${file}`;
    const all = this.#files.get(key) ?? [];
    all.push(...lines);
    if (all.length > this.kept) all.splice(0, all.length - this.kept);
    this.#files.set(key, all);
  }
}

/**
 * Where PHP's fatal error points: a theme's functions.php or a plugin's main file under wp-content, or,
 * for a broken core release, a file of wp-includes calling what that release no longer loads.
 */
function fatalAt({ kind, name }: Culprit): { file: string; fn: string } {
  if (kind === 'core') return { file: 'wp-includes/option.php', fn: 'wp_cache_get' };
  return { file: `wp-content/${kind}s/${name}/${kind === 'theme' ? 'functions' : name}.php`, fn: `${name.replace(/[^a-z0-9]+/g, '_')}_init` };
}

const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];

/** A moment's parts in UTC, as log lines write them (`25`, `Nov`, `2026`, `02:14:07`). */
function when(ms: number): { day: string; month: string; year: string; time: string } {
  const iso = new Date(ms).toISOString();
  return { day: iso.slice(8, 10), month: MONTHS[Number(iso.slice(5, 7)) - 1]!, year: iso.slice(0, 4), time: iso.slice(11, 19) };
}
