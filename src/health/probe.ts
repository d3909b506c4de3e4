import { Agent, EnvHttpProxyAgent, request, type Dispatcher } from 'undici';
import { MAX_REDIRECTS, type HealthSpec } from './spec.js';

/** One fetch of a site's page: what came back, before any judgement. */
export interface ProbeResult {
  /** The last answer's status; null when none came (timeout, refused, TLS). */
  status: number | null;
  /** The first `not_contains` text the page holds. */
  matched?: string;
  /** Why no answer could be judged: `timed out after 15s`, `ECONNREFUSED`, `redirect to another host …`. */
  error?: string;
  /** Where the last answer came from, after redirects. */
  url: string;
}

export interface HealthVerdict {
  healthy: boolean;
  /** `HTTP 200`, `HTTP 500, page says "There has been a critical error on this website"`, `timed out after 15s`. */
  detail: string;
}

/** What the checks need from the network: tests script it, the CLI passes a SiteProbe. */
export interface SiteProbePort {
  probe(url: string, spec: Pick<HealthSpec, 'timeout_ms' | 'not_contains'>, signal?: AbortSignal): Promise<ProbeResult>;
}

/** A page is read this far for `not_contains`; a broken page says so early. */
const MAX_BODY_BYTES = 2 * 1024 * 1024;

export interface SiteProbeOptions {
  /** Names sitefleet to the sites' owners and their firewalls. */
  userAgent: string;
  /** Where HTTP_PROXY, HTTPS_PROXY and NO_PROXY (or their lower-case forms) are read. @default process.env */
  env?: Record<string, string | undefined>;
}

/**
 * Fetches site pages as the ecosystem does: through HTTPS_PROXY / HTTP_PROXY unless NO_PROXY names
 * the host (undici's EnvHttpProxyAgent), except loopback, which is never proxied (as Go's
 * net/http does); redirects followed by hand, so that one to another host is seen, not followed.
 */
export class SiteProbe implements SiteProbePort {
  readonly #direct: Agent;
  readonly #proxied: Dispatcher;
  readonly #userAgent: string;

  constructor(options: SiteProbeOptions) {
    const env = options.env ?? process.env;
    const pick = (name: string) => env[name.toLowerCase()] ?? env[name.toUpperCase()] ?? '';
    const common = { connections: 4, keepAliveTimeout: 4_000 };
    this.#direct = new Agent(common);
    const proxies = { httpProxy: pick('http_proxy'), httpsProxy: pick('https_proxy'), noProxy: pick('no_proxy') };
    this.#proxied = proxies.httpProxy || proxies.httpsProxy ? new EnvHttpProxyAgent({ ...common, ...proxies }) : this.#direct;
    this.#userAgent = options.userAgent;
  }

  async probe(url: string, spec: Pick<HealthSpec, 'timeout_ms' | 'not_contains'>, signal?: AbortSignal): Promise<ProbeResult> {
    const timeout = AbortSignal.timeout(spec.timeout_ms);
    const both = signal ? AbortSignal.any([signal, timeout]) : timeout;
    let at = new URL(url);
    try {
      for (let hop = 0; ; hop++) {
        const res = await request(at, {
          method: 'GET',
          dispatcher: isLoopback(at.hostname) ? this.#direct : this.#proxied,
          headers: { 'user-agent': this.#userAgent, accept: 'text/html,*/*;q=0.5' },
          signal: both,
        });
        const location = res.headers.location;
        if (res.statusCode >= 300 && res.statusCode < 400 && typeof location === 'string') {
          await res.body.dump();
          const next = new URL(location, at);
          if (next.hostname !== at.hostname) return { status: res.statusCode, url: at.href, error: `redirect to another host (${next.host}), not followed` };
          if (hop >= MAX_REDIRECTS) return { status: res.statusCode, url: at.href, error: `more than ${MAX_REDIRECTS} redirects` };
          at = next;
          continue;
        }
        const page = await readCapped(res.body);
        const matched = spec.not_contains.find((text) => page.includes(text));
        return { status: res.statusCode, url: at.href, ...(matched === undefined ? {} : { matched }) };
      }
    } catch (error) {
      if (timeout.aborted) return { status: null, url: at.href, error: `timed out after ${spec.timeout_ms / 1000}s` };
      if (signal?.aborted) return { status: null, url: at.href, error: 'not checked: the run stopped' };
      const e = error as { code?: string; message?: string; cause?: { code?: string; message?: string } };
      return { status: null, url: at.href, error: `could not fetch: ${e.cause?.code ?? e.code ?? e.cause?.message ?? e.message ?? String(error)}` };
    }
  }

  async close(): Promise<void> {
    await Promise.all([this.#direct.close(), this.#proxied === this.#direct ? undefined : this.#proxied.close()]);
  }
}

/**
 * Healthy when the status is one the spec allows and the page holds none of its texts. A redirect
 * not followed is judged by its status (3xx is healthy by default), with the reason in the detail.
 */
export function judge(result: ProbeResult, spec: Pick<HealthSpec, 'status'>): HealthVerdict {
  if (result.status === null) return { healthy: false, detail: result.error ?? 'no answer' };
  const inRange = spec.status.some(([a, b]) => result.status! >= a && result.status! <= b);
  const parts = [`HTTP ${result.status}`];
  if (result.matched !== undefined) parts.push(`page says ${JSON.stringify(result.matched)}`);
  if (result.error) parts.push(result.error);
  return { healthy: inRange && result.matched === undefined, detail: parts.join(', ') };
}

function isLoopback(hostname: string): boolean {
  return hostname === 'localhost' || hostname === '[::1]' || /^127\.\d+\.\d+\.\d+$/.test(hostname);
}

async function readCapped(body: AsyncIterable<Buffer> & { destroy(): unknown }): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of body) {
    chunks.push(chunk);
    size += chunk.length;
    if (size >= MAX_BODY_BYTES) {
      body.destroy();
      break;
    }
  }
  return Buffer.concat(chunks).toString('utf8');
}
