import { SitefleetError } from '../errors.js';

export interface ApiLocation {
  /** `https://api.example.com` */
  origin: string;
  /** Path prefix every endpoint path is appended to, ending in `/v2`. */
  prefix: string;
}

function isLoopback(hostname: string): boolean {
  const host = hostname.replace(/^\[|\]$/g, '');
  return host === 'localhost' || host === '::1' || /^127(?:\.\d{1,3}){3}$/.test(host);
}

/**
 * The user names `{base_url}`; the API lives under `{base_url}/v2`. A trailing `/v2` is tolerated
 * (not doubled). Plain http is refused except on loopback, where the simulator runs: the token
 * would otherwise cross the network in clear text.
 */
export function resolveBaseUrl(baseUrl: string): ApiLocation {
  let url: URL;
  try {
    url = new URL(baseUrl);
  } catch {
    throw new SitefleetError(`base URL ${JSON.stringify(baseUrl)} is not a URL (expected e.g. https://api.example.com)`);
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') {
    throw new SitefleetError(`base URL must use https (got ${url.protocol})`);
  }
  if (url.protocol === 'http:' && !isLoopback(url.hostname)) {
    throw new SitefleetError(`base URL ${url.origin} uses plain http; only https is allowed except on loopback addresses`);
  }
  if (url.search || url.hash) throw new SitefleetError('base URL must not carry a query or fragment');
  let path = url.pathname.replace(/\/+$/, '');
  if (!/\/v2$/.test(path)) path = `${path}/v2`;
  return { origin: url.origin, prefix: path };
}
