import { createHash } from 'node:crypto';
import type { Redis, RedisOptions } from 'ioredis';
import { CoordinationError, UsageError } from '../../errors.js';
import { LONGEST, parseDuration, tooLong } from '../../util/duration.js';
import { redactUrl } from '../../util/redact-url.js';

export interface RedisAddress {
  options: RedisOptions;
  /** The URL without a password, for messages. */
  describe: string;
  /** `?lease=15s`: how long a lock or a claim outlives a process that stopped renewing it. */
  leaseMs: number;
}

export const DEFAULT_LEASE_MS = 15_000;

/**
 * `redis://[user:password@]host[:port][/db][?lease=15s]` (or `rediss://` for TLS). Anything else is a
 * usage error, which quotes what it was given only through `redactUrl`: never its password.
 */
export function parseRedisUrl(text: string): RedisAddress {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new UsageError(`--coordination ${JSON.stringify(redactUrl(text))} is not a URL: give redis://host:port/db`);
  }
  if (url.protocol !== 'redis:' && url.protocol !== 'rediss:')
    throw new UsageError(`--coordination ${redactUrl(text)}: only redis:// and rediss:// URLs are understood (say redis://host:6379/0)`);
  const dbText = url.pathname.replace(/^\//, '') || '0';
  // The path too: `redis://u:12/secret@host` parses, with the rest of the password in it.
  if (!/^\d{1,2}$/.test(dbText)) throw new UsageError(`--coordination: the database in ${redactUrl(url.pathname)} must be a number, as in redis://host:6379/0`);
  const leaseText = url.searchParams.get('lease');
  let leaseMs = DEFAULT_LEASE_MS;
  if (leaseText !== null) {
    const parsed = parseDuration(leaseText);
    if (parsed === undefined) throw new UsageError(`--coordination: lease=${leaseText} is not a duration (say lease=15s)`);
    leaseMs = parsed;
    if (leaseMs < 1000) throw new UsageError(`--coordination: lease=${leaseText} is shorter than a second`);
    const problem = tooLong(leaseText, LONGEST.lease);
    if (problem) throw new UsageError(`--coordination: lease=${problem}`);
  }
  const port = url.port ? Number(url.port) : 6379;
  const host = url.hostname.replace(/^\[|\]$/g, '') || '127.0.0.1';
  return {
    options: {
      host,
      port,
      db: Number(dbText),
      username: url.username ? decodeURIComponent(url.username) : undefined,
      password: url.password ? decodeURIComponent(url.password) : undefined,
      tls: url.protocol === 'rediss:' ? {} : undefined,
    },
    describe: `${url.protocol}//${url.host}/${dbText}`,
    leaseMs,
  };
}

/** A Lua script, sent by its SHA-1 after the first time (EVALSHA, and EVAL when the server has forgotten it). */
export class Script {
  readonly sha: string;
  constructor(readonly lua: string) {
    this.sha = createHash('sha1').update(lua).digest('hex');
  }
}

/**
 * One connection to Redis for the whole process. Any failure to reach it after the start (an error,
 * a closed connection, a command timing out) means the shared lock and budget can no longer be
 * trusted: `lost` aborts with a CoordinationError saying why, and every later call throws it.
 */
export class RedisLink {
  readonly #controller = new AbortController();
  readonly lost: AbortSignal = this.#controller.signal;
  #closing = false;

  private constructor(
    readonly redis: Redis,
    readonly address: RedisAddress,
  ) {
    redis.on('error', (error: Error) => this.fail(error));
    redis.on('close', () => this.fail(new Error('connection closed')));
  }

  /** Connects (ioredis is loaded here, only when coordination is asked for). Unreachable: CoordinationError, nothing sent. */
  static async connect(address: RedisAddress): Promise<RedisLink> {
    const { Redis } = await import('ioredis');
    const redis = new Redis({
      ...address.options,
      lazyConnect: true,
      // A command while disconnected fails at once instead of waiting in a queue: a run must not
      // send on a lock or a budget it cannot check.
      enableOfflineQueue: false,
      maxRetriesPerRequest: 0,
      connectTimeout: 3000,
      commandTimeout: 3000,
      retryStrategy: () => null,
    });
    let firstError: Error | undefined;
    redis.on('error', (error: Error) => (firstError ??= error));
    try {
      await redis.connect();
    } catch (error) {
      redis.disconnect();
      const why = (firstError ?? (error as Error)).message;
      throw new CoordinationError(`cannot reach Redis at ${address.describe} for --coordination (${why}); nothing was sent`, { cause: error });
    }
    redis.removeAllListeners('error');
    return new RedisLink(redis, address);
  }

  /** Stops the run's coordination: the first reason is the one reported. */
  fail(error: Error): void {
    if (this.#closing || this.lost.aborted) return;
    // A ReplyError is Redis answering with an error (an ACL without EVALSHA, say), not Redis gone.
    const what =
      error.name === 'ReplyError' ? `Redis at ${this.address.describe} refused a coordination script` : `lost contact with Redis at ${this.address.describe}`;
    const reason =
      error instanceof CoordinationError
        ? error
        : new CoordinationError(`${what} (${error.message}): the shared lock and rate budget can no longer be trusted`, { cause: error });
    this.#controller.abort(reason);
  }

  /** Runs a script atomically; any failure stops the coordination (see `fail`) and throws why. */
  async run(script: Script, keys: string[], args: (string | number)[]): Promise<unknown> {
    if (this.lost.aborted) throw this.lost.reason as Error;
    try {
      try {
        return await this.redis.evalsha(script.sha, keys.length, ...keys, ...args);
      } catch (error) {
        if (!(error as Error).message.startsWith('NOSCRIPT')) throw error;
        return await this.redis.eval(script.lua, keys.length, ...keys, ...args);
      }
    } catch (error) {
      this.fail(error as Error);
      throw this.lost.reason as Error;
    }
  }

  async close(): Promise<void> {
    this.#closing = true;
    try {
      await this.redis.quit();
    } catch {
      this.redis.disconnect();
    }
  }
}
