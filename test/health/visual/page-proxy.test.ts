import { once } from 'node:events';
import { createServer, request, type Server } from 'node:http';
import { connect, type AddressInfo, type Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import type { Resolver } from '../../../src/health/http/lookup.js';
import { PageProxy, type ProxyRule } from '../../../src/health/visual/page-proxy.js';

/**
 * The proxy's three ways in, spoken to as Chromium speaks to it (absolute-form HTTP, CONNECT, an
 * upgrade), against a server on 127.0.0.1 that counts what reached it. Names resolve from a table.
 */
const closing: { close(): unknown }[] = [];
afterEach(async () => {
  for (const c of closing.splice(0)) await c.close();
});

const table: Resolver = (name) => Promise.resolve(name === 'site.example' ? [{ address: '127.0.0.1', family: 4 }] : []);

async function target(): Promise<{ port: number; seen: string[] }> {
  const seen: string[] = [];
  const server: Server = createServer((req, res) => {
    seen.push(`${req.method} ${req.url} host=${req.headers.host} proxy-connection=${String(req.headers['proxy-connection'] ?? '-')}`);
    res.end('hello');
  });
  server.on('upgrade', (req, socket: Socket) => {
    seen.push(`UPGRADE ${req.url}`);
    socket.end('HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n');
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  closing.push({ close: () => (server.closeAllConnections(), new Promise((r) => server.close(r))) });
  return { port: (server.address() as AddressInfo).port, seen };
}

async function proxyOf(rule: Partial<ProxyRule>): Promise<{ proxy: PageProxy; port: number }> {
  const proxy = await PageProxy.start({ resolve: table, allowPrivate: false, ...rule });
  closing.push(proxy);
  return { proxy, port: Number(new URL(proxy.server).port) };
}

/** A plain `http:` request sent to the proxy in absolute form: the status, or the error when it was cut. */
function viaProxy(port: number, url: string): Promise<{ status?: number; body?: string; error?: string }> {
  return new Promise((resolve) => {
    const req = request({ host: '127.0.0.1', port, path: url, headers: { host: new URL(url).host, 'proxy-connection': 'keep-alive' }, agent: false });
    req.on('response', (res) => {
      let body = '';
      res.on('data', (d: Buffer) => (body += d.toString()));
      res.on('end', () => resolve({ status: res.statusCode!, body }));
    });
    req.on('error', (e: NodeJS.ErrnoException) => resolve({ error: e.code ?? e.message }));
    req.end();
  });
}

/** What the proxy answers to a raw head (CONNECT, an upgrade), and then what came through the tunnel. */
async function raw(port: number, head: string, then?: string): Promise<string> {
  const socket = connect(port, '127.0.0.1');
  closing.push({ close: () => socket.destroy() });
  await once(socket, 'connect');
  let got = '';
  socket.on('data', (d: Buffer) => {
    got += d.toString();
    if (then && got.includes('200 Connection Established') && !got.includes('\r\n\r\nHTTP')) {
      socket.write(then);
      then = undefined;
    }
  });
  socket.write(head);
  await once(socket, 'close');
  return got;
}

describe('PageProxy', () => {
  it('forwards an absolute-form request to the checked address, without the proxy’s own headers; refuses loopback with no answer at all', async () => {
    const site = await target();
    const open = await proxyOf({ allowPrivate: true });
    expect(await viaProxy(open.port, `http://site.example:${site.port}/page?x=1`)).toEqual({ status: 200, body: 'hello' });
    expect(site.seen).toEqual([`GET /page?x=1 host=site.example:${site.port} proxy-connection=-`]);

    const strict = await proxyOf({});
    expect(await viaProxy(strict.port, `http://site.example:${site.port}/page`)).toEqual({ error: 'ECONNRESET' });
    expect(strict.proxy.lastRefusal).toBe('site.example resolves to 127.0.0.1, a loopback address (health.allow_private: true allows it)');
    expect(await viaProxy(strict.port, `http://127.0.0.1:${site.port}/page`)).toEqual({ error: 'ECONNRESET' });
    expect(await viaProxy(strict.port, `http://[::ffff:169.254.169.254]/latest/meta-data/`)).toEqual({ error: 'ECONNRESET' });
    expect(strict.proxy.lastRefusal).toMatch(/^\[::ffff:a9fe:a9fe\]:80 is a link-local address/);
    expect(strict.proxy.refused).toBe(3);
    expect(site.seen).toHaveLength(1);
  });

  it('the browser’s own proxy refuses everything, a public address and the address a playbook names too', async () => {
    const site = await target();
    const { proxy, port } = await proxyOf({ nowhere: true, named: `127.0.0.1:${site.port}` });
    expect(await viaProxy(port, `http://93.184.216.34/`)).toEqual({ error: 'ECONNRESET' });
    expect(await raw(port, `CONNECT update.googleapis.com:443 HTTP/1.1\r\nHost: update.googleapis.com\r\n\r\n`)).toMatch(/^HTTP\/1\.1 403 /);
    expect(await viaProxy(port, `http://127.0.0.1:${site.port}/`)).toEqual({ error: 'ECONNRESET' });
    expect(proxy.refused).toBe(3);
    expect(proxy.lastRefusal).toBe(`127.0.0.1:${site.port}: the browser's own requests go nowhere (only a site's pages reach out)`);
    expect(site.seen).toEqual([]);
  });

  it('the address the playbook names is reached on its port only', async () => {
    const site = await target();
    const other = await target();
    const { port } = await proxyOf({ named: `127.0.0.1:${site.port}` });
    expect(await viaProxy(port, `http://127.0.0.1:${site.port}/`)).toMatchObject({ status: 200 });
    expect(await viaProxy(port, `http://127.0.0.1:${other.port}/`)).toEqual({ error: 'ECONNRESET' });
    expect(await raw(port, `CONNECT 127.0.0.1:${other.port} HTTP/1.1\r\nHost: 127.0.0.1:${other.port}\r\n\r\n`)).toMatch(/^HTTP\/1\.1 403 /);
    expect([site.seen.length, other.seen.length]).toEqual([1, 0]);
  });

  it('tunnels CONNECT to the checked address, and refuses it (403) for the machine’s network', async () => {
    const site = await target();
    const open = await proxyOf({ allowPrivate: true });
    const through = await raw(
      open.port,
      `CONNECT site.example:${site.port} HTTP/1.1\r\nHost: site.example:${site.port}\r\n\r\n`,
      `GET /tunnelled HTTP/1.1\r\nHost: site.example\r\nConnection: close\r\n\r\n`,
    );
    expect(through).toMatch(/^HTTP\/1\.1 200 Connection Established\r\n\r\nHTTP\/1\.1 200 OK\r\n[^]*hello$/);
    const strict = await proxyOf({});
    expect(await raw(strict.port, `CONNECT site.example:${site.port} HTTP/1.1\r\nHost: site.example:${site.port}\r\n\r\n`)).toMatch(/^HTTP\/1\.1 403 /);
    expect(await raw(strict.port, `CONNECT localhost:${site.port} HTTP/1.1\r\nHost: localhost\r\n\r\n`)).toMatch(/^HTTP\/1\.1 403 /);
    expect(strict.proxy.lastRefusal).toBe('localhost names this machine (localhost)');
    expect(site.seen).toEqual([`GET /tunnelled host=site.example proxy-connection=-`]);
  });

  it('passes a WebSocket upgrade on to the checked address, and refuses one to the machine’s network', async () => {
    const site = await target();
    const upgrade = (port: number) =>
      raw(port, `GET http://site.example:${site.port}/ws HTTP/1.1\r\nHost: site.example:${site.port}\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n\r\n`);
    expect(await upgrade((await proxyOf({ allowPrivate: true })).port)).toMatch(/^HTTP\/1\.1 101 /);
    expect(await upgrade((await proxyOf({})).port)).toMatch(/^HTTP\/1\.1 403 /);
    expect(site.seen).toEqual(['UPGRADE /ws']);
  });

  it('a browser that goes away mid-request, or a site that does, ends that request only: the proxy answers the next', async () => {
    const site = await target();
    const { port } = await proxyOf({ allowPrivate: true });
    const cut = connect(port, '127.0.0.1');
    await once(cut, 'connect');
    cut.write(`POST http://site.example:${site.port}/form HTTP/1.1\r\nHost: site.example\r\nContent-Length: 100\r\n\r\nhalf`);
    // The site answers on the request's head; the browser goes away before the rest of its body.
    await once(cut, 'data');
    cut.destroy();
    const tunnel = await raw(port, `CONNECT 127.0.0.1:1 HTTP/1.1\r\nHost: 127.0.0.1:1\r\n\r\n`);
    expect(tunnel).toMatch(/^HTTP\/1\.1 502 /);
    expect(await viaProxy(port, `http://site.example:${site.port}/after`)).toEqual({ status: 200, body: 'hello' });
    expect(site.seen.map((s) => s.split(' ').slice(0, 2).join(' '))).toEqual(['POST /form', 'GET /after']);
  });
});
