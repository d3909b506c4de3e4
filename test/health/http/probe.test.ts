import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { connect, type AddressInfo, type Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { judge, redirectRefusal, SiteProbe } from '../../../src/health/http/probe.js';
import { DEFAULT_NOT_CONTAINS, resolveHealth, type HealthInput } from '../../../src/health/spec.js';

/** The task's `health:` for a test server: its `url` names the server's address, as the simulator's demo does. */
const specFor = (url: string, more: HealthInput = {}) => resolveHealth({ url: `${url}/`, timeout: '1s', ...more }).spec!;

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
    const spec = specFor(url);
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
    const spec = specFor(url);
    try {
      expect(judge(await probe.probe(`${url}/fatal`, spec), spec).healthy).toBe(false);
      expect(judge(await probe.probe(`${url}/missing`, spec), spec)).toEqual({ healthy: false, detail: 'HTTP 404' });
      const custom = specFor(url, { status: '200,404' });
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
    const spec = specFor(url);
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

  it('a page slower than the timeout is unhealthy, with the time in the detail; a closed port says so; neither answered', async () => {
    const { url } = await serve((_req, res) => void setTimeout(() => res.end('late'), 2000));
    const probe = new SiteProbe({ userAgent: 'x', env: {} });
    const fast = specFor(url, { timeout: '200ms' });
    try {
      expect(judge(await probe.probe(`${url}/`, fast), fast)).toEqual({ healthy: false, detail: 'timed out after 0.2s', unanswered: true });
      const closed = await serve(() => undefined);
      const port = new URL(closed.url).port;
      await new Promise((r) => servers.pop()!.close(r));
      expect(judge(await probe.probe(`http://127.0.0.1:${port}/`, fast), fast)).toEqual({
        healthy: false,
        detail: 'could not fetch: ECONNREFUSED',
        unanswered: true,
      });
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
    // Names are resolved here only for a direct fetch: through the proxy, the proxy resolves them.
    const looked: string[] = [];
    const resolve = async (name: string) => {
      looked.push(name);
      throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${name}`), { code: 'ENOTFOUND' });
    };
    const probe = new SiteProbe({ userAgent: 'x', env: { HTTP_PROXY: proxy.url, NO_PROXY: 'skip.example' }, resolve });
    const byName = resolveHealth({ url: 'http://{{domain}}/', timeout: '2s' }).spec!;
    try {
      expect(await probe.probe('http://acme-001.example.com/', byName)).toMatchObject({ status: 200 });
      expect(tunnels).toEqual(['acme-001.example.com:80']);
      expect(site.seen.map((r) => r.headers.host)).toEqual(['acme-001.example.com']);
      await probe.probe(`${site.url}/`, specFor(site.url));
      expect(site.seen).toHaveLength(2);
      expect(tunnels).toHaveLength(1);
      const direct = await probe.probe('http://skip.example/', byName);
      expect(direct).toMatchObject({ status: null, error: 'could not fetch: ENOTFOUND' }); // tried directly, not through the proxy
      expect(tunnels).toHaveLength(1);
      expect(looked).toEqual(['skip.example']);
    } finally {
      await probe.close();
    }
  });
});

/** A resolver from a table, as the system's would answer: names it does not hold are not found. */
function resolverOf(table: Record<string, string[]>) {
  const asked: string[] = [];
  const resolve = async (name: string) => {
    asked.push(name);
    const addresses = table[name];
    if (!addresses) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${name}`), { code: 'ENOTFOUND' });
    return addresses.map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));
  };
  return { resolve, asked };
}

describe('SiteProbe: a domain from the service reaches the internet, not the machine’s network', () => {
  // The test's server on 127.0.0.1 stands for what this machine and its network serve.
  it.each(['2130706433', '0x7f.1', '127.1', '0177.0.0.1', '0x7f000001', '127.0.0.1', '[::ffff:127.0.0.1]', 'localhost', 'shop.localhost'])(
    'the host %s, filled from a domain, is refused and nothing reaches the server',
    async (host) => {
      const { url, seen } = await serve((_req, res) => res.end('internal'));
      const port = new URL(url).port;
      const { resolve, asked } = resolverOf({ localhost: ['127.0.0.1'], 'shop.localhost': ['127.0.0.1'] });
      const probe = new SiteProbe({ userAgent: 'x', env: {}, resolve });
      const spec = resolveHealth({ url: `http://{{domain}}:${port}/`, allow_private: true }).spec!;
      try {
        const result = await probe.probe(`http://${host}:${port}/`, spec);
        expect(result).toMatchObject({
          status: null,
          refused: expect.stringMatching(/ is an IP address the playbook's health\.url does not name$| names this machine \(localhost\)$/),
        });
        expect(judge(result, spec)).toMatchObject({ healthy: false, refused: true, detail: expect.stringMatching(/^not checked: /) });
        expect(seen).toHaveLength(0);
        expect(asked).toEqual([]);
      } finally {
        await probe.close();
      }
    },
  );

  it.each([
    ['intranet.example', ['127.0.0.1'], 'a loopback address'],
    ['metadata.example', ['169.254.169.254'], 'a link-local address (where cloud metadata services answer)'],
    ['office.example', ['192.168.1.20'], 'a private address'],
    ['mapped.example', ['::ffff:127.0.0.1'], 'a loopback address'],
    ['v6.example', ['::1'], 'a loopback address'],
    ['both.example', ['93.184.216.34', '10.0.0.7'], 'a private address'],
  ])('a name that resolves inside a network (%s → %s) is refused before any connection', async (name, addresses, kind) => {
    const { url, seen } = await serve((_req, res) => res.end('internal'));
    const port = new URL(url).port;
    const { resolve, asked } = resolverOf({ [name]: addresses });
    const probe = new SiteProbe({ userAgent: 'x', env: {}, resolve });
    const spec = resolveHealth({ url: `http://{{domain}}:${port}/`, timeout: '2s' }).spec!;
    try {
      const result = await probe.probe(`http://${name}:${port}/`, spec);
      const bad = addresses.find((a) => a !== '93.184.216.34')!;
      expect(result).toEqual({
        status: null,
        url: `http://${name}:${port}/`,
        refused: `${name} resolves to ${bad}, ${kind} (health.allow_private: true allows it)`,
      });
      expect(judge(result, spec)).toEqual({ healthy: false, refused: true, detail: `not checked: ${result.refused}` });
      expect(seen).toHaveLength(0);
      expect(asked).toEqual([name]);
    } finally {
      await probe.close();
    }
  });

  it('allow_private: true fetches such a name, from the address looked up once, with the name as Host', async () => {
    const { url, seen } = await serve((_req, res) => res.end('<p>intranet</p>'));
    const port = new URL(url).port;
    const { resolve, asked } = resolverOf({ 'intranet.example': ['127.0.0.1'] });
    const probe = new SiteProbe({ userAgent: 'x', env: {}, resolve });
    const spec = resolveHealth({ url: `http://{{domain}}:${port}/`, allow_private: true }).spec!;
    try {
      expect(judge(await probe.probe(`http://intranet.example:${port}/`, spec), spec)).toEqual({ healthy: true, detail: 'HTTP 200' });
      expect(seen.map((r) => r.headers.host)).toEqual([`intranet.example:${port}`]);
      expect(asked).toEqual(['intranet.example']); // the name exists only in this resolver: the socket used its answer
    } finally {
      await probe.close();
    }
  });

  it('a name written in the playbook’s own url is held to the address rule; an IP address written there is the author’s choice', async () => {
    const { url, seen } = await serve((_req, res) => res.end('ok'));
    const port = new URL(url).port;
    const { resolve } = resolverOf({ localhost: ['127.0.0.1'] });
    const probe = new SiteProbe({ userAgent: 'x', env: {}, resolve });
    const byName = resolveHealth({ url: `http://localhost:${port}/sites/{{domain}}/` }).spec!;
    try {
      expect(await probe.probe(`http://localhost:${port}/sites/acme.example/`, byName)).toMatchObject({
        refused: 'localhost resolves to 127.0.0.1, a loopback address (health.allow_private: true allows it)',
      });
      expect(seen).toHaveLength(0);
      const byAddress = specFor(`http://127.0.0.1:${port}`);
      expect(await probe.probe(`http://127.0.0.1:${port}/sites/acme.example/`, byAddress)).toMatchObject({ status: 200 });
      expect(seen).toHaveLength(1);
    } finally {
      await probe.close();
    }
  });

  it('a redirect to another port of the same host is refused: the check fails naming it, and the other port gets nothing', async () => {
    const other = await serve((_req, res) => res.end('admin console'));
    const otherPort = new URL(other.url).port;
    const { url } = await serve((req, res) => {
      if (req.url === '/') res.writeHead(302, { location: `http://127.0.0.1:${otherPort}/admin` }).end();
      else res.writeHead(301, { location: `ftp://127.0.0.1/${req.url}` }).end();
    });
    const probe = new SiteProbe({ userAgent: 'x', env: {} });
    const spec = specFor(url);
    try {
      const result = await probe.probe(`${url}/`, spec);
      expect(judge(result, spec)).toEqual({
        healthy: false,
        detail: `HTTP 302, redirect to http://127.0.0.1:${otherPort}/admin refused: to another port (${otherPort})`,
      });
      expect(other.seen).toHaveLength(0);
      expect(judge(await probe.probe(`${url}/x`, spec), spec)).toMatchObject({ healthy: false, detail: expect.stringContaining('refused: from http to ftp') });
    } finally {
      await probe.close();
    }
  });

  it.each([
    ['https://shop.example/', '/home', undefined],
    ['http://shop.example/', 'https://shop.example/', undefined],
    ['http://shop.example:8080/', 'https://shop.example:8080/', undefined],
    ['https://shop.example/', 'http://shop.example/', 'from https to http'],
    ['https://shop.example/', 'https://shop.example:8443/', 'to another port (8443)'],
    ['http://shop.example:8080/', 'https://shop.example/', 'to another port (the default)'],
    ['http://shop.example/', 'file://shop.example/etc/passwd', 'from http to file'],
  ])('a redirect from %s to %s: %s', (from, to, why) => {
    expect(redirectRefusal(new URL(from), new URL(to, from))).toBe(why);
  });
});
