import { Agent, EnvHttpProxyAgent, request, type Dispatcher } from 'undici';
import { parseRetryAfter } from '../api/retry-after.js';

/** How one message is sent: its timeout, its tries, and the first wait between them (doubled each time). */
export interface DeliveryPolicy {
  timeoutMs: number;
  tries: number;
  backoffMs: number;
  /** Where HTTP(S)_PROXY and NO_PROXY are read: the command's environment. */
  env: Record<string, string | undefined>;
}

export const DEFAULT_DELIVERY = { timeoutMs: 10_000, tries: 3, backoffMs: 1_000 } as const;

/** A receiver's Retry-After is waited out up to this long: a run's end is not held for minutes by a chat's rate limit. */
const MAX_RETRY_AFTER_MS = 30_000;

export interface Message {
  method: 'GET' | 'POST';
  body?: string;
  headers?: Record<string, string>;
}

export type Delivery = { ok: true; tries: number } | { ok: false; tries: number; error: string };

/**
 * Sends one message: network errors, timeouts, 5xx and 429 are tried again (up to `tries` in all, after
 * `backoffMs`, then twice that, …, or a 429's Retry-After); any other answer ends it: 2xx delivered, a
 * redirect or another 4xx not (a redirect is not followed: a POST must not turn into a GET elsewhere).
 * The error says what happened in words that never hold the URL: an error's own message may quote
 * the address, so only its code is kept.
 */
export async function deliver(url: URL, message: Message, policy: DeliveryPolicy): Promise<Delivery> {
  const dispatcher = dispatcherFor(policy.env);
  let error = '';
  let wait = 0;
  try {
    for (let attempt = 1; attempt <= policy.tries; attempt++) {
      if (attempt > 1) await new Promise((resolve) => setTimeout(resolve, wait));
      const answer = await sendOnce(url, message, policy.timeoutMs, dispatcher);
      const { status } = answer;
      if (status !== undefined && status >= 200 && status < 300) return { ok: true, tries: attempt };
      error = status === undefined ? answer.error : status < 400 ? `HTTP ${status} (a redirect, not followed: give the final URL)` : `HTTP ${status}`;
      // Network errors, timeouts, 5xx and 429 (after its Retry-After, within reason) are tried again; the rest end it.
      if (status !== undefined && status < 500 && status !== 429) return { ok: false, tries: attempt, error };
      const backoff = policy.backoffMs * 2 ** (attempt - 1);
      wait = status === 429 ? Math.min(answer.retryAfterMs ?? backoff, MAX_RETRY_AFTER_MS) : backoff;
    }
    return { ok: false, tries: policy.tries, error };
  } finally {
    await dispatcher.close();
  }
}

async function sendOnce(
  url: URL,
  message: Message,
  timeoutMs: number,
  dispatcher: Dispatcher,
): Promise<{ status?: number; retryAfterMs?: number; error: string }> {
  try {
    const answer = await request(url, {
      method: message.method,
      body: message.body,
      headers: { 'user-agent': 'sitefleet', ...message.headers },
      dispatcher,
      signal: AbortSignal.timeout(timeoutMs),
    });
    await answer.body.dump(); // what the receiver says is not read: its status is the answer
    return { status: answer.statusCode, retryAfterMs: parseRetryAfter(answer.headers['retry-after']), error: '' };
  } catch (error) {
    const e = error as NodeJS.ErrnoException & { cause?: NodeJS.ErrnoException };
    if (e.name === 'TimeoutError' || e.name === 'AbortError') return { error: `no answer within ${timeoutMs / 1000}s` };
    return { error: `network error (${e.code ?? e.cause?.code ?? e.name})` };
  }
}

/** Direct, or through the environment's proxy (HTTPS_PROXY, NO_PROXY) as a notification from a locked-down host must be. */
function dispatcherFor(env: Record<string, string | undefined>): Dispatcher {
  const pick = (name: string) => env[name.toLowerCase()] ?? env[name.toUpperCase()] ?? '';
  const proxies = { httpProxy: pick('http_proxy'), httpsProxy: pick('https_proxy'), noProxy: pick('no_proxy') };
  return proxies.httpProxy || proxies.httpsProxy ? new EnvHttpProxyAgent(proxies) : new Agent();
}
