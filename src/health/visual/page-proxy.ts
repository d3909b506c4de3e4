import { Agent, createServer, request, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { connect, isIP, type AddressInfo, type Socket } from 'node:net';
import { addressRefusal, nameRefusal } from '../http/address.js';
import { AddressRefusedError, checkedLookup, refusalIn, type Resolver } from '../http/lookup.js';

/** Where the pages of one site may go. */
export interface ProxyRule {
  resolve: Resolver;
  /** `health.allow_private`: addresses inside the machine's network may be reached too. */
  allowPrivate: boolean;
  /** `127.0.0.1:8080`: the address and port the playbook's own `health.url` names, reached whatever it is. */
  named?: string;
  /**
   * The browser's own proxy, which no site's context overrides: every request refused. Only a site's
   * pages reach out; the full browser asks for update and account servers despite its flags.
   */
  nowhere?: true;
}

/** Headers that belong to one hop (the browser's connection to this proxy), never forwarded. */
const HOP_HEADERS = new Set(['connection', 'keep-alive', 'proxy-connection', 'proxy-authorization', 'proxy-authenticate', 'te', 'trailer', 'upgrade']);

/**
 * The forward proxy every request of a site's pages goes through (HTTP, HTTPS tunnelled with CONNECT,
 * WebSockets): on 127.0.0.1, in this process. Chromium is told to resolve nothing itself, so each host
 * is resolved here, once per connection, checked by the address rule (http/address.ts: no loopback, private,
 * link-local or metadata address unless `allowPrivate`), and the socket connects to the very address
 * that was checked. Every hop of a redirect is a request of its own, so a page cannot be led where a
 * check may not go, nor reach it by a name that answers a public address to one lookup and a private
 * one to the next. HTTPS is tunnelled, not opened: what the page and the site say stays theirs.
 */
export class PageProxy {
  readonly #server: Server;
  readonly #agent: Agent;
  readonly #lookup: ReturnType<typeof checkedLookup>;
  readonly #sockets = new Set<Socket>();
  /** How many connections were refused, and why the last one was: why a page that could not load did not. */
  refused = 0;
  lastRefusal?: string;

  private constructor(private readonly rule: ProxyRule) {
    this.#lookup = checkedLookup(rule.resolve, rule.allowPrivate);
    this.#agent = new Agent({ keepAlive: true, maxSockets: 6 });
    this.#server = createServer((req, res) => this.#forward(req, res));
    this.#server.on('connect', (req: IncomingMessage, client: Socket, head: Buffer) => this.#tunnel(req.url ?? '', client, head));
    this.#server.on('upgrade', (req: IncomingMessage, client: Socket, head: Buffer) => this.#upgrade(req, client, head));
    this.#server.on('connection', (socket: Socket) => {
      this.#sockets.add(socket);
      socket.once('close', () => this.#sockets.delete(socket));
    });
  }

  /** A proxy listening on a free port of 127.0.0.1 (`http://127.0.0.1:port`, as Chromium is told). */
  static async start(rule: ProxyRule): Promise<PageProxy> {
    const proxy = new PageProxy(rule);
    await new Promise<void>((resolve, reject) => {
      proxy.#server.once('error', reject);
      proxy.#server.listen(0, '127.0.0.1', () => resolve());
    });
    return proxy;
  }

  get server(): string {
    return `http://127.0.0.1:${(this.#server.address() as AddressInfo).port}`;
  }

  /** Why `host:port` may not be reached before any lookup (an address of the machine's network, `localhost`), or undefined. */
  #refusal(hostname: string, port: number): string | undefined {
    const host = hostname.replace(/^\[|\]$/g, '');
    if (this.rule.nowhere) return `${hostname}:${port}: the browser's own requests go nowhere (only a site's pages reach out)`;
    if (this.rule.named !== undefined && `${hostname}:${port}` === this.rule.named) return undefined;
    if (this.rule.allowPrivate) return undefined;
    if (isIP(host)) {
      const kind = addressRefusal(host);
      return kind ? `${hostname}:${port} is ${kind}` : undefined;
    }
    const why = nameRefusal(host);
    return why ? `${hostname} ${why}` : undefined;
  }

  #refused(why: string): void {
    this.refused++;
    this.lastRefusal = why;
  }

  /** An `https:` (or `wss:`, or any WebSocket) connection: `CONNECT host:port`, a tunnel once the address passed. */
  #tunnel(authority: string, client: Socket, head: Buffer): void {
    const target = URL.canParse(`http://${authority}/`) ? new URL(`http://${authority}/`) : undefined;
    client.on('error', () => undefined);
    if (!target || target.port === '') return void client.end('HTTP/1.1 400 Bad Request\r\nConnection: close\r\n\r\n');
    this.#open(target.hostname, Number(target.port), client, (upstream) => {
      client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
      if (head.length > 0) upstream.write(head);
    });
  }

  /** An `http:` WebSocket sent to the proxy as an upgrade (Chromium tunnels them, others may not): its head is passed on as it came. */
  #upgrade(req: IncomingMessage, client: Socket, head: Buffer): void {
    const target = absolute(req.url);
    client.on('error', () => undefined);
    if (!target) return void client.end('HTTP/1.1 400 Bad Request\r\nConnection: close\r\n\r\n');
    this.#open(target.hostname, Number(target.port || 80), client, (upstream) => {
      const lines = [`${req.method} ${target.pathname}${target.search} HTTP/1.1`];
      for (let i = 0; i < req.rawHeaders.length; i += 2) {
        const name = req.rawHeaders[i]!;
        if (!/^proxy-/i.test(name)) lines.push(`${name}: ${req.rawHeaders[i + 1]}`);
      }
      upstream.write(`${lines.join('\r\n')}\r\n\r\n`);
      if (head.length > 0) upstream.write(head);
    });
  }

  /** Connects to the checked address of `hostname:port` and joins it to the client; a refusal closes the client with 403. */
  #open(hostname: string, port: number, client: Socket, opened: (upstream: Socket) => void): void {
    const why = this.#refusal(hostname, port);
    const refuse = (reason: string) => {
      this.#refused(reason);
      client.end('HTTP/1.1 403 Forbidden\r\nConnection: close\r\n\r\n');
    };
    if (why) return refuse(why);
    const upstream = connect({ host: hostname.replace(/^\[|\]$/g, ''), port, lookup: this.#lookup });
    let joined = false;
    upstream.once('connect', () => {
      joined = true;
      opened(upstream);
      upstream.pipe(client);
      client.pipe(upstream);
    });
    upstream.on('error', (error) => {
      if (error instanceof AddressRefusedError) return refuse(error.message);
      if (joined) client.destroy();
      else client.end('HTTP/1.1 502 Bad Gateway\r\nConnection: close\r\n\r\n');
    });
    client.once('close', () => upstream.destroy());
    upstream.once('close', () => client.destroy());
  }

  /** A plain `http:` request (absolute-form): sent on to its checked address, the answer passed back as it comes. */
  #forward(req: IncomingMessage, res: ServerResponse): void {
    const target = absolute(req.url);
    if (!target) return void res.writeHead(400, { connection: 'close' }).end();
    const port = Number(target.port || 80);
    const why = this.#refusal(target.hostname, port);
    // A refused request gets no answer at all: an answer from here would be shot as if it were the site's page.
    if (why) return (this.#refused(why), void req.socket.destroy());
    const headers: Record<string, string | string[]> = {};
    for (const [name, value] of Object.entries(req.headers)) if (value !== undefined && !HOP_HEADERS.has(name)) headers[name] = value;
    const out = request({
      host: target.hostname.replace(/^\[|\]$/g, ''),
      port,
      method: req.method,
      path: `${target.pathname}${target.search}`,
      headers,
      agent: this.#agent,
      lookup: this.#lookup,
    });
    out.on('response', (answer) => {
      const back: Record<string, string | string[]> = {};
      for (const [name, value] of Object.entries(answer.headers)) if (value !== undefined && !HOP_HEADERS.has(name)) back[name] = value;
      res.writeHead(answer.statusCode ?? 502, answer.statusMessage, back);
      answer.pipe(res);
      answer.once('error', () => res.destroy());
    });
    out.on('error', (error) => {
      const refusal = refusalIn(error);
      if (refusal) this.#refused(refusal);
      if (refusal || res.headersSent) return void req.socket.destroy();
      res.writeHead(502, { connection: 'close' }).end();
    });
    // The browser gave up on the answer (the page was closed): the request to the site is dropped too.
    res.once('close', () => res.writableFinished || out.destroy());
    req.once('error', () => out.destroy());
    req.pipe(out);
  }

  /** Stops listening, and ends every connection still open (the context is closed: nothing in flight is wanted). */
  async close(): Promise<void> {
    const closed = new Promise<void>((resolve) => this.#server.close(() => resolve()));
    for (const socket of this.#sockets) socket.destroy();
    this.#agent.destroy();
    await closed;
  }
}

/** An absolute-form `http:` request target (`http://host:port/path`), as a browser sends it to a proxy. */
function absolute(url: string | undefined): URL | undefined {
  if (url === undefined || !URL.canParse(url)) return undefined;
  const target = new URL(url);
  return target.protocol === 'http:' || target.protocol === 'ws:' ? target : undefined;
}
