import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { connect, type AddressInfo, type Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { judge, SiteProbe } from '../../src/health/probe.js';
import { DEFAULT_NOT_CONTAINS, resolveHealth } from '../../src/health/spec.js';

const spec = resolveHealth({ timeout: '1s' }).spec!;

/** A server on 127.0.0.1 that the test stops; `seen` holds every request it got. */
const servers: Server[] = [];
afterEach(async () => {
  for (const s of servers.splice(0)) {
    s.closeAllConnections();
    await new Promise((r) => s.close(r));
  }
});
async function serve(handler: (req: IncomingMessage, res: ServerResponse) => void): Promise<{ url: string; seen: IncomingMessage[] }> {
  const seen: IncomingMessage[] = [];
  const server = createServer((req, res) => {
    seen.push(req);
    handler(req, res);
  });
  servers.push(server);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, seen };
}

describe('SiteProbe', () => {
  it('fetches the page naming sitefleet, and judges status and text', async () => {
    const { url, seen } = await serve((req, res) => {
      if (req.url === '/ok/') res.end('<p>Just another WordPress site</p>');
      else res.writeHead(500).end('<p>There has been a critical error on this website.</p>');
    });
    const probe = new SiteProbe({ userAgent: 'sitefleet/9.9 (health check)', env: {} });
    try {
      const ok = await probe.probe(`${url}/ok/`, spec);
      expect(judge(ok, spec)).toEqual({ healthy: true, detail: 'HTTP 200' });
      const broken = await probe.probe(`${url}/broken/`, spec);
      expect(judge(broken, spec)).toEqual({ healthy: false, detail: `HTTP 500, page says ${JSON.stringify(DEFAULT_NOT_CONTAINS[0])}` });
      expect(seen.map((r) => r.headers['user-agent'])).toEqual(['sitefleet/9.9 (health check)', 'sitefleet/9.9 (health check)']);
    } finally {
      await probe.close();
    }
  });

  it('a 200 page with the PHP fatal error marker is broken; a status outside the range is too', async () => {
    const { url } = await serve((req, res) => {
      if (req.url === '/fatal') res.end('<br />\n<b>Fatal error</b>:  Uncaught Error in functions.php');
      else res.writeHead(404).end('gone');
    });
    const probe = new SiteProbe({ userAgent: 'x', env: {} });
    try {
      expect(judge(await probe.probe(`${url}/fatal`, spec), spec).healthy).toBe(false);
      expect(judge(await probe.probe(`${url}/missing`, spec), spec)).toEqual({ healthy: false, detail: 'HTTP 404' });
      const custom = resolveHealth({ status: '200,404' }).spec!;
      expect(judge(await probe.probe(`${url}/missing`, custom), custom).healthy).toBe(true);
    } finally {
      await probe.close();
    }
  });

  it('follows redirects on the same host (up to 5), judges one to another host without following it', async () => {
    const { url, seen } = await serve((req, res) => {
      const m = /^\/hop\/(\d+)$/.exec(req.url ?? '');
      if (m) res.writeHead(302, { location: Number(m[1]) > 0 ? `/hop/${Number(m[1]) - 1}` : '/home/' }).end();
      else if (req.url === '/away') res.writeHead(301, { location: 'https://elsewhere.example/' }).end();
      else res.end('home');
    });
    const probe = new SiteProbe({ userAgent: 'x', env: {} });
    try {
      expect(await probe.probe(`${url}/hop/3`, spec)).toMatchObject({ status: 200, url: `${url}/home/` });
      const tooMany = await probe.probe(`${url}/hop/9`, spec);
      expect(judge(tooMany, spec)).toMatchObject({ healthy: true, detail: 'HTTP 302, more than 5 redirects' });
      const away = await probe.probe(`${url}/away`, spec);
      expect(away).toMatchObject({ status: 301, error: 'redirect to another host (elsewhere.example), not followed' });
      expect(seen.some((r) => r.headers.host === 'elsewhere.example')).toBe(false);
    } finally {
      await probe.close();
    }
  });

  it('a page slower than the timeout is unhealthy, with the time in the detail; a closed port says so', async () => {
    const { url } = await serve((_req, res) => void setTimeout(() => res.end('late'), 2000));
    const probe = new SiteProbe({ userAgent: 'x', env: {} });
    const fast = resolveHealth({ timeout: '200ms' }).spec!;
    try {
      expect(judge(await probe.probe(`${url}/`, fast), fast)).toEqual({ healthy: false, detail: 'timed out after 0.2s' });
      const closed = await serve(() => undefined);
      const port = new URL(closed.url).port;
      await new Promise((r) => servers.pop()!.close(r));
      expect(judge(await probe.probe(`http://127.0.0.1:${port}/`, fast), fast).detail).toBe('could not fetch: ECONNREFUSED');
    } finally {
      await probe.close();
    }
  });

  it('goes through HTTP_PROXY for a site, unless NO_PROXY names it; loopback is never proxied', async () => {
    // The proxy tunnels (CONNECT) every host to the test's own site: nothing on the internet is reached.
    const site = await serve((req, res) => res.end(`site for ${req.headers.host}`));
    const proxy = await serve((_req, res) => res.writeHead(405).end());
    const tunnels: string[] = [];
    servers.at(-1)!.on('connect', (req: IncomingMessage, socket: Socket) => {
      tunnels.push(req.url ?? '');
      const upstream = connect(Number(new URL(site.url).port), '127.0.0.1', () => {
        socket.write('HTTP/1.1 200 Connection Established\r\n\r\n');
        upstream.pipe(socket).pipe(upstream);
      });
      socket.on('error', () => upstream.destroy());
      upstream.on('error', () => socket.destroy());
    });
    const probe = new SiteProbe({ userAgent: 'x', env: { HTTP_PROXY: proxy.url, NO_PROXY: 'skip.example' } });
    try {
      expect(await probe.probe('http://acme-001.example.com/', spec)).toMatchObject({ status: 200 });
      expect(tunnels).toEqual(['acme-001.example.com:80']);
      expect(site.seen.map((r) => r.headers.host)).toEqual(['acme-001.example.com']);
      await probe.probe(`${site.url}/`, spec);
      expect(site.seen).toHaveLength(2);
      expect(tunnels).toHaveLength(1);
      const direct = await probe.probe('http://skip.example/', resolveHealth({ timeout: '2s' }).spec!);
      expect(direct.status).toBeNull(); // tried directly (no such host here), not through the proxy
      expect(tunnels).toHaveLength(1);
    } finally {
      await probe.close();
    }
  });
});
