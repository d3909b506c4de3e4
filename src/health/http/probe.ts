import { isIP } from 'node:net';
import { Agent, EnvHttpProxyAgent, request, type Dispatcher } from 'undici';
import { nameRefusal } from './address.js';
import { checkedLookup, refusalIn, systemResolver, type Resolver } from './lookup.js';
import { hostFromService, literalAddress, MAX_REDIRECTS, type HealthSpec } from '../spec.js';

/** One fetch of a site's page: what came back, before any judgement. */
export interface ProbeResult {
  /** The last answer's status; null when none came (timeout, refused, TLS). */
  status: number | null;
  /** The first `not_contains` text the page holds. */
  matched?: string;
  /** Why no answer could be judged: `timed out after 15s`, `ECONNREFUSED`, `redirect to another host …`. */
  error?: string;
  /** A redirect to another port or from https to http: not followed, and the check fails whatever the status. */
  redirectRefused?: true;
  /** Why nothing was sent: the site's address is one a check may not reach (`shop.example resolves to 10.0.0.5, …`). */
  refused?: string;
  /** Where the last answer came from, after redirects. */
  url: string;
}

export interface HealthVerdict {
  healthy: boolean;
  /** `HTTP 200`, `HTTP 500, page says "There has been a critical error on this website"`, `timed out after 15s`. */
  detail: string;
  /** The site was not fetched because of where it is: nothing was sent, so its write must not go out unchecked either. */
  refused?: true;
  /** No answer came at all (DNS, a refused connection, a timeout, TLS): the page was not seen, healthy or not. */
  unanswered?: true;
}

/** What a fetch needs of the task's `health:`: its page texts and timeout, and where it may go (`url`, `allow_private`). */
export type ProbeSpec = Pick<HealthSpec, 'timeout_ms' | 'not_contains' | 'url' | 'allow_private'>;

/** What the checks need from the network: tests script it, the CLI passes a SiteProbe. */
export interface SiteProbePort {
  probe(url: string, spec: ProbeSpec, signal?: AbortSignal): Promise<ProbeResult>;
}

/** A page is read this far for `not_contains`; a broken page says so early. */
const MAX_BODY_BYTES = 2 * 1024 * 1024;

export interface SiteProbeOptions {
  /** Names sitefleet to the sites' owners and their firewalls. */
  userAgent: string;
  /** Where HTTP_PROXY, HTTPS_PROXY and NO_PROXY (or their lower-case forms) are read. @default process.env */
  env?: Record<string, string | undefined>;
  /** Resolves a site's name to its addresses, once per connection. @default the system's resolver */
  resolve?: Resolver;
}

/** The dispatchers for one address rule: direct (loopback is never proxied), and through the environment's proxy. */
interface Route {
  direct: Agent;
  proxied: Dispatcher;
}

/**
 * Fetches site pages as the ecosystem does: through HTTPS_PROXY / HTTP_PROXY unless NO_PROXY names
 * the host (undici's EnvHttpProxyAgent), except loopback, which is never proxied (as Go's
 * net/http does); redirects followed by hand, so that one to another host is seen, not followed.
 *
 * Where a check may go (see address.ts): an IP address only if the playbook's `url` names it; a
 * name only if every address it resolves to is on the internet (or `allow_private`), and the socket
 * connects to the addresses that were checked. Through a proxy the proxy resolves the name and
 * connects: the address rule is then the proxy's to keep.
 */
export class SiteProbe implements SiteProbePort {
  readonly #checked: Route;
  readonly #open: Route;
  readonly #userAgent: string;

  constructor(options: SiteProbeOptions) {
    const env = options.env ?? process.env;
    const pick = (name: string) => env[name.toLowerCase()] ?? env[name.toUpperCase()] ?? '';
    const proxies = { httpProxy: pick('http_proxy'), httpsProxy: pick('https_proxy'), noProxy: pick('no_proxy') };
    const resolve = options.resolve ?? systemResolver;
    const route = (allowPrivate: boolean): Route => {
      const common = { connections: 4, keepAliveTimeout: 4_000, connect: { lookup: checkedLookup(resolve, allowPrivate) } };
      const direct = new Agent(common);
      return { direct, proxied: proxies.httpProxy || proxies.httpsProxy ? new EnvHttpProxyAgent({ ...common, ...proxies }) : direct };
    };
    this.#checked = route(false);
    this.#open = route(true);
    this.#userAgent = options.userAgent;
  }

  async probe(url: string, spec: ProbeSpec, signal?: AbortSignal): Promise<ProbeResult> {
    const timeout = AbortSignal.timeout(spec.timeout_ms);
    const both = signal ? AbortSignal.any([signal, timeout]) : timeout;
    let at = new URL(url);
    const refused = hostRefusal(at, spec);
    if (refused) return { status: null, url: at.href, refused };
    const route = spec.allow_private ? this.#open : this.#checked;
    try {
      for (let hop = 0; ; hop++) {
        const res = await request(at, {
          method: 'GET',
          dispatcher: isLoopback(at.hostname) ? route.direct : route.proxied,
          headers: { 'user-agent': this.#userAgent, accept: 'text/html,*/*;q=0.5' },
          signal: both,
        });
        const location = res.headers.location;
        if (res.statusCode >= 300 && res.statusCode < 400 && typeof location === 'string') {
          await res.body.dump();
          const next = new URL(location, at);
          if (next.hostname !== at.hostname) return { status: res.statusCode, url: at.href, error: `redirect to another host (${next.host}), not followed` };
          const why = redirectRefusal(at, next);
          if (why) return { status: res.statusCode, url: at.href, error: `redirect to ${next.href} refused: ${why}`, redirectRefused: true };
          if (hop >= MAX_REDIRECTS) return { status: res.statusCode, url: at.href, error: `more than ${MAX_REDIRECTS} redirects` };
          at = next;
          continue;
        }
        const page = await readCapped(res.body);
        const matched = spec.not_contains.find((text) => page.includes(text));
        return { status: res.statusCode, url: at.href, ...(matched === undefined ? {} : { matched }) };
      }
    } catch (error) {
      const refusal = refusalIn(error);
      if (refusal) return { status: null, url: at.href, refused: refusal };
      if (timeout.aborted) return { status: null, url: at.href, error: `timed out after ${spec.timeout_ms / 1000}s` };
      if (signal?.aborted) return { status: null, url: at.href, error: 'not checked: the run stopped' };
      const e = error as { code?: string; message?: string; cause?: { code?: string; message?: string } };
      return { status: null, url: at.href, error: `could not fetch: ${e.cause?.code ?? e.code ?? e.cause?.message ?? e.message ?? String(error)}` };
    }
  }

  async close(): Promise<void> {
    const all = new Set<Dispatcher>([this.#checked.direct, this.#checked.proxied, this.#open.direct, this.#open.proxied]);
    await Promise.all([...all].map((d) => d.close()));
  }
}

/**
 * Why a URL's host is not fetched at all, before any lookup: an IP address the playbook's `url` does
 * not name itself, or (when the host came from the service) `localhost` by name.
 */
function hostRefusal(at: URL, spec: ProbeSpec): string | undefined {
  if (at.hostname === literalAddress(spec.url)) return undefined;
  if (isIP(at.hostname.replace(/^\[|\]$/g, ''))) return `${at.hostname} is an IP address the playbook's health.url does not name`;
  const why = hostFromService(spec.url) ? nameRefusal(at.hostname) : undefined;
  return why ? `${at.hostname} ${why}` : undefined;
}

/**
 * Why a redirect on the same host is not followed: it must keep the scheme (or go from http to
 * https) and the port, so that a site cannot point a check at another service of its host.
 */
export function redirectRefusal(from: URL, to: URL): string | undefined {
  const upgrade = from.protocol === 'http:' && to.protocol === 'https:';
  if (to.protocol !== from.protocol && !upgrade) return `from ${from.protocol.slice(0, -1)} to ${to.protocol.slice(0, -1)}`;
  if (to.port !== from.port) return `to another port (${to.port || 'the default'})`;
  return undefined;
}

/**
 * Healthy when the status is one the spec allows and the page holds none of its texts. A redirect
 * to another host is judged by its status (3xx is healthy by default), with the reason in the
 * detail; one refused (another port, https to http) is unhealthy. A refused address is unhealthy; so
 * is no answer at all, which says so (`unanswered`: the look before a write tells it from a broken page).
 */
export function judge(result: ProbeResult, spec: Pick<HealthSpec, 'status'>): HealthVerdict {
  if (result.refused !== undefined) return { healthy: false, detail: `not checked: ${result.refused}`, refused: true };
  if (result.status === null) return { healthy: false, detail: result.error ?? 'no answer', unanswered: true };
  const inRange = spec.status.some(([a, b]) => result.status! >= a && result.status! <= b);
  const parts = [`HTTP ${result.status}`];
  if (result.matched !== undefined) parts.push(`page says ${JSON.stringify(result.matched)}`);
  if (result.error) parts.push(result.error);
  return { healthy: inRange && result.matched === undefined && !result.redirectRefused, detail: parts.join(', ') };
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
