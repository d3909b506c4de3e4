import { Pool } from 'undici';
import {
  AbortedError,
  AuthenticationError,
  HttpError,
  MalformedResponseError,
  NetworkError,
  NotFoundError,
  RateLimitError,
  ServerError,
  TimeoutError,
} from '../errors.js';
import { reasonText, serviceReason } from './answer.js';
import { resolveBaseUrl, type ApiLocation } from './base-url.js';
import { parseRetryAfter } from './retry-after.js';

export interface TransportOptions {
  baseUrl: string;
  token: string;
  /** Keep-alive connections kept open to the API (default 16). */
  connections?: number;
  connectTimeoutMs?: number;
  headersTimeoutMs?: number;
  bodyTimeoutMs?: number;
  userAgent?: string;
}

export interface RawResponse {
  status: number;
  /** Parsed JSON body, or undefined when the body was empty. */
  data: unknown;
}

/** Errors that say the request certainly never reached the server. */
const NEVER_SENT_CODES = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH', 'UND_ERR_CONNECT_TIMEOUT']);

/**
 * Sends one JSON request over keep-alive connections and turns every outcome into either a parsed
 * body or one of the typed errors. It knows nothing of endpoints, retries or rate limits.
 */
export class Transport {
  readonly location: ApiLocation;
  readonly #pool: Pool;
  readonly #headers: Record<string, string>;

  constructor(options: TransportOptions) {
    this.location = resolveBaseUrl(options.baseUrl);
    if (!options.token) throw new Error('an API token is required');
    this.#pool = new Pool(this.location.origin, {
      connections: options.connections ?? 16,
      pipelining: 1,
      keepAliveTimeout: 30_000,
      connect: { timeout: options.connectTimeoutMs ?? 10_000 },
      headersTimeout: options.headersTimeoutMs ?? 60_000,
      bodyTimeout: options.bodyTimeoutMs ?? 60_000,
    });
    this.#headers = {
      authorization: `Bearer ${options.token}`,
      accept: 'application/json',
      'user-agent': options.userAgent ?? 'sitefleet',
    };
  }

  async send(method: string, path: string, body?: unknown, signal?: AbortSignal): Promise<RawResponse> {
    const fullPath = this.location.prefix + path;
    const headers = body === undefined ? this.#headers : { ...this.#headers, 'content-type': 'application/json' };
    let statusCode: number;
    let responseHeaders: Record<string, string | string[] | undefined>;
    let text: string;
    try {
      const res = await this.#pool.request({
        method: method,
        path: fullPath,
        headers,
        body: body === undefined ? undefined : JSON.stringify(body),
        signal,
      });
      statusCode = res.statusCode;
      responseHeaders = res.headers;
      text = await res.body.text();
    } catch (error) {
      throw this.#transportError(error, method, path, signal);
    }
    const data = parseBody(text);
    if (statusCode >= 200 && statusCode < 300) {
      if (data === MALFORMED) throw new MalformedResponseError(statusCode, method, path, `not JSON: ${preview(text)}`);
      return { status: statusCode, data };
    }
    throw httpError(statusCode, method, path, data === MALFORMED ? { message: preview(text) } : data, responseHeaders['retry-after']);
  }

  close(): Promise<void> {
    return this.#pool.close();
  }

  #transportError(error: unknown, method: string, path: string, signal?: AbortSignal): Error {
    const code = (error as { code?: string }).code ?? '';
    if (signal?.aborted || code === 'UND_ERR_ABORTED') return new AbortedError(`${method} ${path} was cancelled`, { cause: error });
    if (code === 'UND_ERR_CONNECT_TIMEOUT') return new TimeoutError('connect', method, path, { cause: error });
    if (code === 'UND_ERR_HEADERS_TIMEOUT') return new TimeoutError('headers', method, path, { cause: error });
    if (code === 'UND_ERR_BODY_TIMEOUT') return new TimeoutError('body', method, path, { cause: error });
    const reason = (error as Error).message || code || 'connection failed';
    return new NetworkError(`${method} ${path}: ${reason}${code && !reason.includes(code) ? ` (${code})` : ''}`, !NEVER_SENT_CODES.has(code), {
      cause: error,
    });
  }
}

const MALFORMED = Symbol('malformed');

function parseBody(text: string): unknown {
  if (text.trim() === '') return undefined;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return MALFORMED;
  }
}

function preview(text: string): string {
  const oneLine = text.replace(/\s+/g, ' ').trim();
  return oneLine.length > 120 ? `${oneLine.slice(0, 120)}…` : oneLine || '(empty)';
}

/** The service answers errors as `{status, message, data}`; anything else is tolerated. */
function httpError(status: number, method: string, path: string, body: unknown, retryAfter: string | string[] | undefined): HttpError {
  const fields = typeof body === 'object' && body !== null ? (body as { message?: unknown; data?: unknown }) : {};
  const outer = typeof fields.message === 'string' ? fields.message : undefined;
  // The reason may be nested under an outer message that only points to it (see answer.ts).
  const reason = serviceReason(body);
  const message = reason ? reasonText(reason) : undefined;
  if (status === 401) return new AuthenticationError(status, method, path, message ?? 'the API key is missing, wrong or revoked');
  if (status === 404) return new NotFoundError(status, method, path, message ?? 'not found, or not visible to this API key', fields.data);
  // One public client of the real service also takes a refusal that says "too many requests" for a
  // rate limit: a throttle answers before any work is done.
  if (status === 429 || ((status < 500 || status === 503) && /too many requests/i.test(outer ?? '')))
    return new RateLimitError(method, path, outer, parseRetryAfter(retryAfter));
  if (status >= 500) return new ServerError(status, method, path, message, fields.data);
  return new HttpError(status, method, path, message, fields.data);
}
