import { readFileSync, statSync } from 'node:fs';
import type { Logger } from 'pino';
import { HostingClient } from '../api/client.js';
import { UsageError } from '../errors.js';
import { Caller } from '../run/caller.js';
import { RateBudget } from '../run/rate-budget.js';
import type { Coordination, SharedWindow } from '../coord/types.js';
import { parseRate } from '../util/rate.js';
import { createLogger } from './logger.js';
import type { TrackOptions } from '../run/watcher.js';

/** Options every command understands (commander's globals). */
export interface GlobalOptions {
  baseUrl?: string;
  tokenFile?: string;
  company?: string;
  concurrency?: number;
  rate?: string;
  logLevel?: string;
  logFile?: string;
  quiet?: boolean;
  stateDir?: string;
  /** `--sites FILE`: site display name → site id (YAML or CSV). */
  sites?: string;
  /** First wait between operation polls, in ms (advanced; tests and the simulator use it). */
  pollInterval?: number;
  /** `--coordination redis://host:port/db`: lock, rate budget and busy environments shared through Redis. */
  coordination?: string;
}

/** The service's documented budget: about 120 requests a minute per company. */
export const DEFAULT_RATE = '120/min';
export const DEFAULT_CONCURRENCY = 8;

export { UsageError } from '../errors.js';

/** The token comes from SITEFLEET_TOKEN or a file, never from a flag (flags end up in shell history and `ps`). */
export function readToken(opts: GlobalOptions, env = process.env, warn = (text: string) => void process.stderr.write(`sitefleet: warning: ${text}\n`)): string {
  if (opts.tokenFile) {
    let token: string;
    try {
      const mode = statSync(opts.tokenFile).mode & 0o777;
      if (mode & 0o077)
        warn(`--token-file ${opts.tokenFile} can be read by others (mode ${mode.toString(8)}); make it private with: chmod 600 ${opts.tokenFile}`);
      token = readFileSync(opts.tokenFile, 'utf8').trim();
    } catch (error) {
      throw new UsageError(`cannot read --token-file ${opts.tokenFile}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`);
    }
    if (!token) throw new UsageError(`--token-file ${opts.tokenFile} is empty`);
    return token;
  }
  const token = env.SITEFLEET_TOKEN?.trim();
  if (!token) throw new UsageError('no API token: set SITEFLEET_TOKEN or pass --token-file FILE');
  return token;
}

export interface Runtime {
  logger: Logger;
  client: HostingClient;
  budget: RateBudget;
  /** The company's budget shared with other processes (--coordination), beside this process's own. */
  shared?: SharedWindow;
  caller: Caller;
  /** What this command shares with other runs of the company (this machine alone, or Redis). */
  coordination: Coordination;
  rate: string;
  concurrency: number;
  tracking: Partial<TrackOptions>;
  close(): Promise<void>;
}

export interface RuntimeOptions {
  settings?: { rate_limit?: string; concurrency?: number; operation_path?: string };
  logger?: Logger;
  /** Opened by the caller, who closes it (the run lock lives in it); else this machine alone. */
  coordination: Coordination;
  /** The company whose budget is shared (with coordination). */
  company?: string;
  /** Close the coordination with the runtime. */
  ownsCoordination?: boolean;
}

/**
 * Opens the coordination the options name (loading Redis only if asked), then the runtime, which
 * closes it. For commands that take no run lock: they still draw from the company's shared budget.
 */
export async function openRuntime(opts: GlobalOptions, company?: string): Promise<Runtime> {
  const { openCoordination } = await import('../coord/open.js');
  const coordination = await openCoordination(opts);
  try {
    return createRuntime(opts, { coordination, company, ownsCoordination: true });
  } catch (error) {
    await coordination.close();
    throw error;
  }
}

/** Client, rate budget and caller for a command that talks to the API. */
export function createRuntime(opts: GlobalOptions, options: RuntimeOptions): Runtime {
  const { settings = {}, logger, coordination, company } = options;
  if (!opts.baseUrl) throw new UsageError('no API base URL: set SITEFLEET_BASE_URL or pass --base-url URL');
  const token = readToken(opts);
  const log = logger ?? createLogger({ level: opts.logLevel, file: opts.logFile });
  const rate = opts.rate ?? settings.rate_limit ?? DEFAULT_RATE;
  let parsed;
  try {
    parsed = parseRate(rate);
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
  const concurrency = opts.concurrency ?? settings.concurrency ?? DEFAULT_CONCURRENCY;
  let client: HostingClient;
  try {
    client = new HostingClient({ baseUrl: opts.baseUrl, token, connections: Math.max(concurrency, 1), operationPath: settings.operation_path });
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
  const budget = new RateBudget(parsed.limit, parsed.periodMs);
  const shared = company ? coordination.sharedWindow(company, parsed.limit, parsed.periodMs) : undefined;
  const caller = new Caller(client, { budget, shared, logger: log, concurrency });
  return {
    logger: log,
    client,
    budget,
    caller,
    shared,
    coordination,
    rate,
    concurrency,
    tracking: opts.pollInterval ? { intervalMs: opts.pollInterval, maxIntervalMs: Math.max(opts.pollInterval, 15 * opts.pollInterval) } : {},
    async close() {
      budget.dispose();
      await client.close();
      if (options.ownsCoordination) await coordination.close();
    },
  };
}
