/**
 * One base class, one subclass per thing that can go wrong. Each carries the exit code the CLI ends
 * with when it stops a command, and the CLI prints one readable line; the runner maps each to a retry
 * decision. Messages never contain the API token.
 */

/** Exit codes, as the README documents them. */
export const EXIT = { ok: 0, someFailed: 1, invalid: 2, stopped: 3, locked: 4, window: 5, notReached: 6, interrupted: 130 } as const;
export type ExitCode = (typeof EXIT)[keyof typeof EXIT];

/** What each exit code means, in the words of `run --help`: one table for every place that says it (help, pings, webhooks, pages, metrics). */
export const EXIT_MEANING: Record<number, string> = {
  [EXIT.ok]: 'all accepted or succeeded',
  [EXIT.someFailed]: 'some steps failed or are unknown',
  [EXIT.invalid]: 'invalid input or usage',
  [EXIT.stopped]: 'run stopped (authentication, failure budget, coordination lost)',
  [EXIT.locked]: 'another run holds the lock',
  [EXIT.window]: 'outside the maintenance window, or it closed with steps not sent',
  [EXIT.notReached]: 'the service, its base URL or the company could not be reached; nothing was sent',
  [EXIT.interrupted]: 'interrupted',
};

export function exitMeaning(code: number): string {
  return EXIT_MEANING[code] ?? 'unexpected error';
}

export class SitefleetError extends Error {
  override name = 'SitefleetError';
  /** The exit code when this error ends a command: 1 unless a subclass says otherwise. */
  readonly exitCode: ExitCode = EXIT.someFailed;
  /** A line after the message that says what to do, when there is one. */
  readonly advice: string | undefined = undefined;
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
  }
}

/** The run's maintenance window is closed (settings.window, --not-after): exit 5, nothing sent. */
export class OutsideWindowError extends SitefleetError {
  override name = 'OutsideWindowError';
  override readonly exitCode = EXIT.window;
}

/** A usage problem: exit code 2, one line. */
export class UsageError extends SitefleetError {
  override name = 'UsageError';
  override readonly exitCode = EXIT.invalid;
}

/** One problem in user input, located as precisely as we can. */
export interface InputProblem {
  file?: string;
  line?: number;
  column?: number;
  /** Dotted path of the field, e.g. `tasks.2.with.ip_list.1`. */
  path: string;
  message: string;
}

export function formatProblem(p: InputProblem): string {
  const where = p.file ? `${p.file}:${p.line ?? 1}:${p.column ?? 1}: ` : '';
  return `${where}${p.path || '(root)'}: ${p.message}`;
}

/** A playbook (or any user input) that cannot be used. Exit code 2. Nothing was sent. */
export class InvalidInputError extends SitefleetError {
  override name = 'InvalidInputError';
  override readonly exitCode = EXIT.invalid;
  constructor(readonly problems: InputProblem[]) {
    super(problems.map(formatProblem).join('\n'));
  }
}

/** A request body that breaks the API's rules; raised before anything is sent. */
export class RequestValidationError extends SitefleetError {
  override name = 'RequestValidationError';
  override readonly exitCode = EXIT.invalid;
  constructor(
    readonly endpoint: string,
    readonly problems: InputProblem[],
  ) {
    super(`${endpoint}: ${problems.map(formatProblem).join('; ')}`);
  }
}

/** The server answered with a status we do not treat as success. */
export class HttpError extends SitefleetError {
  override name = 'HttpError';
  constructor(
    readonly status: number,
    readonly method: string,
    readonly path: string,
    readonly serverMessage: string | undefined,
    readonly data: unknown = undefined,
  ) {
    super(`${method} ${path} answered ${status}${serverMessage ? `: ${serverMessage}` : ''}`);
  }
}

/** 401: the key is missing, wrong or revoked. Stops a whole run. */
export class AuthenticationError extends HttpError {
  override name = 'AuthenticationError';
  override readonly exitCode = EXIT.stopped;
  override readonly advice = 'Check the API token (SITEFLEET_TOKEN or --token-file) and the base URL. Nothing was changed.';
}

/** 404: the thing does not exist, or this key may not see it (the service does not say which). */
export class NotFoundError extends HttpError {
  override name = 'NotFoundError';
}

/** 429: too many requests. `retryAfterMs` is the server's Retry-After, parsed, when it sent one. */
export class RateLimitError extends HttpError {
  override name = 'RateLimitError';
  constructor(
    method: string,
    path: string,
    serverMessage: string | undefined,
    readonly retryAfterMs: number | undefined,
  ) {
    super(429, method, path, serverMessage);
  }
}

/**
 * The service kept answering 429 for longer than the run may wait (`--rate-limit-wait`). Our own
 * budget keeps under the limit, so somebody else is using it: another client of the same key.
 */
export class RateLimitedTooLongError extends SitefleetError {
  override name = 'RateLimitedTooLongError';
  constructor(
    readonly waitedMs: number,
    readonly call: string,
    options?: { cause?: unknown },
  ) {
    super(
      `the service answered 429 (too many requests) to ${call} for ${Math.round(waitedMs / 1000)}s: another client of this API key is using the budget. ` +
        'Share it with --coordination, leave room for the others with settings.headroom, or wait longer with --rate-limit-wait',
      options,
    );
  }
}

/** 5xx. The request reached the server; whether it was applied is unknown. */
export class ServerError extends HttpError {
  override name = 'ServerError';
}

/**
 * The connection failed. `mayHaveReached` is false only when we know the request never left
 * (connection refused, DNS failure): then even a creating call can be sent again.
 */
export class NetworkError extends SitefleetError {
  override name = 'NetworkError';
  constructor(
    message: string,
    readonly mayHaveReached: boolean,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

/** No answer in time. The request may have been applied. */
export class TimeoutError extends NetworkError {
  override name = 'TimeoutError';
  constructor(
    readonly phase: 'connect' | 'headers' | 'body',
    method: string,
    path: string,
    options?: { cause?: unknown },
  ) {
    super(`${method} ${path}: no ${phase === 'connect' ? 'connection' : phase} in time`, phase !== 'connect', options);
  }
}

/** The server answered 2xx but the body was not the JSON we expected (truncated, HTML, wrong shape). */
export class MalformedResponseError extends SitefleetError {
  override name = 'MalformedResponseError';
  constructor(
    readonly status: number,
    readonly method: string,
    readonly path: string,
    detail: string,
  ) {
    super(`${method} ${path} answered ${status} with a body that is not what the API promises: ${detail}`);
  }
}

/** The run was interrupted (signal) or a call was cancelled. */
export class AbortedError extends SitefleetError {
  override name = 'AbortedError';
}

/** A command that sends nothing (printing a page) ended by Ctrl-C or a signal: exit 130, as a shell reports it. */
export class InterruptedError extends SitefleetError {
  override name = 'InterruptedError';
  override readonly exitCode = EXIT.interrupted;
}

/**
 * The shared state of `--coordination` (Redis) cannot be reached or trusted: the lock, the budget or
 * the busy register. Nothing more is started (exit 3); what was sent is in the journal.
 */
export class CoordinationError extends SitefleetError {
  override name = 'CoordinationError';
  override readonly exitCode = EXIT.stopped;
}

/**
 * The first-seen times of theme versions (release ages) cannot be recorded or read from the state
 * folder: nothing is planned or sent, since ages judged without them would be wrong. Exit 2: the fix
 * is the folder (`--state-dir`) or its file, named in the message.
 */
export class StateFolderError extends SitefleetError {
  override name = 'StateFolderError';
  override readonly exitCode = EXIT.invalid;
}

/** Who holds a run lock, as its holder wrote it (see coord/types.ts). */
interface Holder {
  pid: number;
  host: string;
  started_at: string;
  command: string;
}

/**
 * Another run holds the lock. Exit code 4. `held` names what is locked (`this company`, a playbook of
 * it); `hint` says how that lock lets go (a file to remove, a lease).
 */
export class LockedError extends SitefleetError {
  override name = 'LockedError';
  override readonly exitCode = EXIT.locked;
  constructor(
    readonly where: string,
    readonly holder: Holder | undefined,
    held: string,
    hint: string,
  ) {
    super(
      holder
        ? `another sitefleet run holds the lock for ${held}: pid ${holder.pid} on ${holder.host}, started ${holder.started_at} (${holder.command}). Wait for it, pass --wait-lock, or ${hint}.`
        : `the lock ${where} exists but cannot be read; ${hint}`,
    );
  }
}

/**
 * The fleet could not be read before anything was sent: the service cannot be reached at the base URL,
 * answers as no API does, or knows no such company. Exit 6, one line saying what to check: exit 1
 * would say that some steps failed, and none was sent.
 */
export class NotReachedError extends SitefleetError {
  override name = 'NotReachedError';
  override readonly exitCode = EXIT.notReached;
}

const COMPANY = "(--company, SITEFLEET_COMPANY or the playbook's company:)";
const BASE_URL = 'the base URL (--base-url or SITEFLEET_BASE_URL)';

/**
 * What an error of the fleet's first reads (GETs, before any write) tells a person, or undefined when
 * it is not about reaching the service (a 401 has its own advice, exit 3):
 *
 * | error of a read before any write               | what to check                                   |
 * | ---------------------------------------------- | ----------------------------------------------- |
 * | 404 to a company path (`/company/{id}/…`)      | the company, then the base URL (a wrong path    |
 * |                                                | under it answers 404 too)                       |
 * | connection refused, reset, DNS, timeout        | the base URL, the network                       |
 * | 5xx after the retries                          | the service's status, then try again            |
 * | a 2xx that is not the API's JSON               | the base URL (it reached something else)        |
 */
export function notReached(error: unknown, where: { baseUrl: string | undefined; company: string }): NotReachedError | undefined {
  const at = where.baseUrl === undefined ? 'the base URL' : withoutUserinfo(where.baseUrl);
  const said = error instanceof Error ? error.message : String(error);
  let check: string | undefined;
  if (error instanceof NotFoundError && error.path.startsWith('/company/')) check = `the company ${where.company} ${COMPANY} and ${BASE_URL}`;
  else if (error instanceof NetworkError) check = `${BASE_URL} and the network: the service does not answer at ${at}`;
  else if (error instanceof ServerError) check = `the service's status at ${at}, then run again`;
  else if (error instanceof MalformedResponseError) check = `${BASE_URL}: ${at} answers, but not as the hosting API`;
  if (check === undefined) return undefined;
  return new NotReachedError(`${said}. Check ${check}; nothing was sent`, { cause: error });
}

/** A URL as it may be printed: a password in it never is. */
function withoutUserinfo(url: string): string {
  try {
    const parsed = new URL(url);
    parsed.username = '';
    parsed.password = '';
    return parsed.href.replace(/\/$/, '');
  } catch {
    return url;
  }
}

/** Runs `read` (reads before any write) turning an error that says the service or company was not reached into a NotReachedError. */
export async function readingFirst<T>(where: { baseUrl: string | undefined; company: string }, read: () => Promise<T>): Promise<T> {
  try {
    return await read();
  } catch (error) {
    throw notReached(error, where) ?? error;
  }
}
