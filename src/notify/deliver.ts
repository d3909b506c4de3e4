import { Agent, EnvHttpProxyAgent, request, type Dispatcher } from 'undici';

/** How one message is sent: its timeout, its tries, and the first wait between them (doubled each time). */
export interface DeliveryPolicy {
  timeoutMs: number;
  tries: number;
  backoffMs: number;
  /** Where HTTP(S)_PROXY and NO_PROXY are read: the command's environment. */
  env: Record<string, string | undefined>;
}

export const DEFAULT_DELIVERY = { timeoutMs: 10_000, tries: 3, backoffMs: 1_000 } as const;

export interface Message {
  method: 'GET' | 'POST';
  body?: string;
  headers?: Record<string, string>;
}

export type Delivery = { ok: true; tries: number } | { ok: false; tries: number; error: string };

/**
 * Sends one message: network errors, timeouts and 5xx are tried again (up to `tries` in all, after
 * `backoffMs`, then twice that, …); any other answer ends it (2xx and 3xx delivered, 4xx refused).
 * The error says what happened in words that never hold the URL: an error's own message may quote
 * the address, so only its code is kept.
 */
export async function deliver(url: URL, message: Message, policy: DeliveryPolicy): Promise<Delivery> {
  const dispatcher = dispatcherFor(policy.env);
  let error = '';
  try {
    for (let attempt = 1; attempt <= policy.tries; attempt++) {
      if (attempt > 1) await new Promise((resolve) => setTimeout(resolve, policy.backoffMs * 2 ** (attempt - 2)));
      const answer = await sendOnce(url, message, policy.timeoutMs, dispatcher);
      if (answer.status !== undefined && answer.status < 400) return { ok: true, tries: attempt };
      error = answer.status === undefined ? answer.error : `HTTP ${answer.status}`;
      if (answer.status !== undefined && answer.status < 500) return { ok: false, tries: attempt, error };
    }
    return { ok: false, tries: policy.tries, error };
  } finally {
    await dispatcher.close();
  }
}

async function sendOnce(url: URL, message: Message, timeoutMs: number, dispatcher: Dispatcher): Promise<{ status?: number; error: string }> {
  try {
    const answer = await request(url, {
      method: message.method,
      body: message.body,
      headers: { 'user-agent': 'sitefleet', ...message.headers },
      dispatcher,
      signal: AbortSignal.timeout(timeoutMs),
    });
    await answer.body.dump(); // what the receiver says is not read: its status is the answer
    return { status: answer.statusCode, error: '' };
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
