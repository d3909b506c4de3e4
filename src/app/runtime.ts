import { readFileSync, statSync } from 'node:fs';
import type { Logger } from 'pino';
import { HostingClient } from '../api/client.js';
import { UsageError } from '../errors.js';
import { Caller, DEFAULT_CONCURRENCY } from '../run/caller.js';
import { RateBudget } from '../run/rate-budget.js';
import type { Coordination, SharedWindow } from '../coord/types.js';
import { parseRate } from '../util/rate.js';
import { createLogger } from './logger.js';
import type { TrackOptions } from '../run/watcher.js';
import { DEFAULT_RETRY } from '../run/retry.js';
import { LOGS_RATE } from '../run/error-log.js';
import type { PlaybookSettings } from '../playbook/types.js';
import { parseDuration } from '../util/duration.js';
import type { Io } from './io.js';
import type { View } from './view.js';

/** Options every command understands (commander's globals). */
export interface GlobalOptions {
  /** Not a flag: the streams, environment and signals the command runs with (io.ts; set by main). */
  io: Io;
  /** Not a flag: how plans, summaries, prompts and status lines are shown (the terminal's, set by the program). */
  view: View;
  baseUrl?: string;
  tokenFile?: string;
  company?: string;
  concurrency?: number;
  rate?: string;
  logLevel?: string;
  logFile?: string;
  /** `--log-format`: log lines on stderr as text (default) or JSON. */
  logFormat?: 'text' | 'json';
  quiet?: boolean;
  stateDir?: string;
  /** `--sites FILE`: site display name → site id (YAML or CSV). */
  sites?: string;
  /** First wait between operation polls, in ms (advanced; tests and the simulator use it). */
  pollInterval?: number;
  /** `--coordination redis://host:port/db`: lock, rate budget and busy environments shared through Redis. */
  coordination?: string;
  /** `--create-rate N/period`: the service's limit on creating calls, when known. */
  createRate?: string;
  /** `--rate-limit-wait DURATION`, in ms: how long one call keeps trying while the service answers 429 (default 10m). */
  rateLimitWait?: number;
  /** `--allow-outside FILE` (repeated): files outside the playbook's folder that it may name. */
  allowOutside?: string[];
  /** `--health-url TEMPLATE`: the page every `health:` check fetches, instead of each task's `health.url`. */
  healthUrl?: string;
}

/** The service's documented budget: about 120 requests a minute per company. */
export const DEFAULT_RATE = '120/min';

export { UsageError } from '../errors.js';

/** The token comes from SITEFLEET_TOKEN or a file, never from a flag (flags end up in shell history and `ps`). */
export function readToken(opts: GlobalOptions, warn = (text: string) => void opts.io.stderr.write(`sitefleet: warning: ${text}\n`)): string {
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
  const token = opts.io.env.SITEFLEET_TOKEN?.trim();
  if (!token) throw new UsageError('no API token: set SITEFLEET_TOKEN or pass --token-file FILE');
  return token;
}

export interface Runtime {
  logger: Logger;
  client: HostingClient;
  budget: RateBudget;
  /** The rule of creating calls: configured (`create_rate_limit`), or learned from 429s apart from `budget`. */
  creation: RateBudget;
  /** The logs endpoint's own rule (35 reads a minute), beside `budget`. */
  logs: RateBudget;
  /** The company's budget shared with other processes (--coordination), beside this process's own. */
  shared?: SharedWindow;
  caller: Caller;
  /** What this command shares with other runs of the company (this machine alone, or Redis). */
  coordination: Coordination;
  rate: string;
  /** What the budget allows, for estimates: calls a second (after headroom), and creating calls a second when their limit is known. */
  pace: { perSecond: number; createPerSecond?: number };
  concurrency: number;
  tracking: Partial<TrackOptions>;
  close(): Promise<void>;
}

type RuntimeSettings = Pick<PlaybookSettings, 'rate_limit' | 'create_rate_limit' | 'headroom' | 'concurrency' | 'operation_path' | 'not_found_grace'>;

export interface RuntimeOptions {
  settings?: RuntimeSettings;
  logger?: Logger;
  /** The scope's (run-scope.ts), which closes it after the runtime; the runtime never does. */
  coordination: Coordination;
  /** The company whose budget is shared (with coordination). */
  company?: string;
}

function usage<T>(parse: () => T): T {
  try {
    return parse();
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
}

/** Client, rate budget and caller for a command that talks to the API. */
export function createRuntime(opts: GlobalOptions, options: RuntimeOptions): Runtime {
  const { settings = {}, logger, coordination, company } = options;
  if (!opts.baseUrl) throw new UsageError('no API base URL: set SITEFLEET_BASE_URL or pass --base-url URL');
  const token = readToken(opts);
  const log = logger ?? createLogger({ level: opts.logLevel, file: opts.logFile, format: opts.logFormat, stderr: opts.io.stderr });
  const rate = opts.rate ?? settings.rate_limit ?? DEFAULT_RATE;
  const createRate = opts.createRate ?? settings.create_rate_limit;
  const parsed = usage(() => parseRate(rate));
  // Without a known creation limit the rule starts at the general one and learns from 429s.
  const parsedCreate = createRate ? usage(() => parseRate(createRate)) : parsed;
  const rateLimitWaitMs = opts.rateLimitWait ?? DEFAULT_RETRY.rateLimitWaitMs;
  // Headroom: a share of each window left to the key's other clients.
  const share = 1 - (settings.headroom ?? 0);
  const limit = Math.max(1, Math.floor(parsed.limit * share));
  const createLimit = Math.max(1, Math.floor(parsedCreate.limit * share));
  const concurrency = opts.concurrency ?? settings.concurrency ?? DEFAULT_CONCURRENCY;
  let client: HostingClient;
  try {
    client = new HostingClient({ baseUrl: opts.baseUrl, token, connections: Math.max(concurrency, 1), operationPath: settings.operation_path });
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
  const budget = new RateBudget(limit, parsed.periodMs);
  const creation = new RateBudget(createLimit, parsedCreate.periodMs);
  const logsLimit = Math.max(1, Math.floor(LOGS_RATE.limit * share));
  const logs = new RateBudget(logsLimit, LOGS_RATE.periodMs);
  const shared = company ? coordination.sharedWindow(company, limit, parsed.periodMs) : undefined;
  const sharedCreation = company ? coordination.sharedWindow(company, createLimit, parsedCreate.periodMs, 'create') : undefined;
  const sharedLogs = company ? coordination.sharedWindow(company, logsLimit, LOGS_RATE.periodMs, 'logs') : undefined;
  const retry = { ...DEFAULT_RETRY, rateLimitWaitMs };
  const caller = new Caller(client, { budget, creation, logs, shared, sharedCreation, sharedLogs, logger: log, concurrency, retry });
  const notFoundGraceMs = settings.not_found_grace === undefined ? undefined : parseDuration(settings.not_found_grace);
  return {
    logger: log,
    client,
    budget,
    creation,
    logs,
    caller,
    shared,
    coordination,
    rate,
    pace: {
      perSecond: (limit * 1000) / parsed.periodMs,
      ...(createRate ? { createPerSecond: (createLimit * 1000) / parsedCreate.periodMs } : {}),
    },
    concurrency,
    tracking: {
      ...(opts.pollInterval ? { intervalMs: opts.pollInterval, maxIntervalMs: Math.max(opts.pollInterval, 15 * opts.pollInterval) } : {}),
      ...(notFoundGraceMs === undefined ? {} : { notFoundGraceMs }),
    },
    async close() {
      budget.dispose();
      creation.dispose();
      logs.dispose();
      await client.close();
    },
  };
}
