import { createSocket, type Socket as UdpSocket } from 'node:dgram';
import { existsSync, readdirSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { connect, type AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { PageProxy } from '../../../src/health/visual/page-proxy.js';
import { Screenshooter, type ShotOptions } from '../../../src/health/visual/screenshots.js';
import type { Resolver } from '../../../src/health/http/lookup.js';
import { CHROMIUM, fullChromium } from '../../helpers/browser.js';
import { tempDir } from '../../helpers/cli.js';

/**
 * The visual check's browser reaches only where a check may go, whatever a (compromised) page does:
 * real Chromium, pages served on 127.0.0.1 (the playbook names that address, as the simulator's sites
 * are named), and a server of "the machine's network" on another port that must never be reached.
 * Names resolve from a table (offline), as the health check's tests do.
 */

// Playwright makes each browser's throwaway profile in the temporary folder: this file's own, to look in.
// Put back after: the worker runs other files after this one (vitest.config.ts, isolate: false).
const TMP = tempDir();
const tmpBefore = process.env.TMPDIR;
beforeAll(() => void (process.env.TMPDIR = TMP));
afterAll(() => {
  if (tmpBefore === undefined) delete process.env.TMPDIR;
  else process.env.TMPDIR = tmpBefore;
});

const SHOT: ShotOptions = { width: 800, height: 600, max_height: 1200, hide: [] };
const NAMES: Record<string, string> = { 'internal.example': '127.0.0.1', 'shop.example': '127.0.0.1', localhost: '127.0.0.1' };
const resolve: Resolver = (name) =>
  NAMES[name] ? Promise.resolve([{ address: NAMES[name], family: 4 }]) : Promise.reject(Object.assign(new Error(`ENOTFOUND ${name}`), { code: 'ENOTFOUND' }));

const servers: Server[] = [];
async function listen(server: Server): Promise<number> {
  servers.push(server);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return (server.address() as AddressInfo).port;
}

/** The machine's network: every connection it gets (TCP, and UDP datagrams) is one a page should not have made. */
const inside = { port: 0, connections: 0, requests: [] as string[], datagrams: 0 };
let udp: UdpSocket;
/** The site: what it was asked for, and what its page said it saw. */
const site = { port: 0, requests: [] as string[], reports: [] as string[] };
/** Answers /wait once the page has reported everything it tried: the page's load waits for that. */
const waiting: (() => void)[] = [];
const EXPECTED = ['fetch', 'ws', 'popup', 'notification', 'webrtc'];

function page(): string {
  const b = `127.0.0.1:${inside.port}`;
  return `<!doctype html><body style="background:#fff"><h1>shop</h1>
<img src="http://${b}/img"><img src="http://internal.example:${inside.port}/named"><img src="http://localhost:${inside.port}/localhost">
<img src="/redirect-img">
<script>
const report = (what) => fetch('/report?' + what);
fetch('http://${b}/fetch').then(() => 'fetch=answered', () => 'fetch=failed').then(report);
new Promise((r) => { const ws = new WebSocket('ws://${b}/ws'); ws.onopen = () => r('ws=open'); ws.onerror = () => r('ws=failed'); }).then(report);
const popup = window.open('/popup');
const looked = setInterval(() => { if (!popup || popup.closed) { clearInterval(looked); report('popup=' + (popup ? 'closed' : 'blocked')); } }, 20);
Notification.requestPermission().then((p) => report('notification=' + p));
const pc = new RTCPeerConnection({ iceServers: [{ urls: 'stun:127.0.0.1:${udp.address().port}' }] });
pc.createDataChannel('x');
let candidates = 0;
pc.onicecandidate = (e) => (e.candidate ? candidates++ : report('webrtc=' + candidates + '-candidates'));
pc.createOffer().then((o) => pc.setLocalDescription(o));
</script>
<iframe src="/wait"></iframe></body>`;
}

function siteHandler(req: IncomingMessage, res: ServerResponse): void {
  const url = req.url ?? '';
  site.requests.push(url);
  const to = (where: string) => void res.writeHead(302, { location: where }).end();
  if (url === '/page') return void res.writeHead(200, { 'content-type': 'text/html' }).end(page());
  if (url === '/plain') return void res.writeHead(200, { 'content-type': 'text/html' }).end('<h1>plain</h1>');
  if (url === '/redirect') return to(`http://127.0.0.1:${inside.port}/redirected`);
  if (url === '/redirect-named') return to(`http://internal.example:${inside.port}/redirected`);
  if (url === '/redirect-img') return to(`http://127.0.0.1:${inside.port}/redirected-img`);
  if (url.startsWith('/report?')) {
    site.reports.push(url.slice('/report?'.length));
    res.writeHead(204).end();
    if (EXPECTED.every((what) => site.reports.some((r) => r.startsWith(`${what}=`)))) for (const go of waiting.splice(0)) go();
    return;
  }
  if (url === '/wait') return void waiting.push(() => res.writeHead(200, { 'content-type': 'text/html' }).end('<p>done</p>'));
  res.writeHead(200, { 'content-type': 'text/html' }).end('<p>popup</p>');
}

let shooter: Screenshooter;
beforeAll(async () => {
  const machine = createServer((req, res) => {
    inside.requests.push(req.url ?? '');
    res.end('secret');
  });
  machine.on('connection', () => inside.connections++);
  inside.port = await listen(machine);
  udp = createSocket('udp4');
  udp.on('message', () => inside.datagrams++);
  await new Promise<void>((r) => udp.bind(0, '127.0.0.1', r));
  site.port = await listen(createServer(siteHandler));
  shooter = await Screenshooter.launch(CHROMIUM, { concurrency: 2, userAgent: 'sitefleet-test', sandbox: false, resolve });
});
afterAll(async () => {
  await shooter?.close();
  udp?.close();
  for (const s of servers) {
    s.closeAllConnections();
    await new Promise((r) => s.close(r));
  }
});

const named = () => `127.0.0.1:${site.port}`;

/** Whether anything listens at a proxy's address (`http://127.0.0.1:port`): `connected`, or the error's code. */
function answers(server: string): Promise<string> {
  const socket = connect(Number(new URL(server).port), '127.0.0.1');
  return new Promise((resolve) => {
    socket.once('connect', () => (socket.destroy(), resolve('connected')));
    socket.once('error', (error: NodeJS.ErrnoException) => resolve(error.code ?? error.message));
  });
}

describe('the visual check’s browser goes through a proxy that keeps the address rule', () => {
  it('a page’s images, fetch, WebSocket, redirected image and WebRTC to the machine’s network are refused; pop-ups closed, permissions denied; the page is still shot', async () => {
    site.reports = [];
    const camera = await shooter.site({ width: 800, height: 600, named: named() });
    try {
      const shot = await camera.shoot(`http://${named()}/page`, SHOT);
      expect(shot.png.length).toBeGreaterThan(0);
    } finally {
      await camera.close();
    }
    expect(site.requests).toContain('/redirect-img');
    expect(site.reports.sort()).toEqual(['fetch=failed', 'notification=denied', 'popup=closed', 'webrtc=0-candidates', 'ws=failed']);
    expect(inside).toMatchObject({ connections: 0, requests: [], datagrams: 0 });
  });

  // The two browsers take the WebRTC policy from different flags (screenshots.ts, PAGE_FLAGS): each is held to it.
  it('the full browser (Debian’s chromium, for machines without the headless shell) keeps the same rule', async () => {
    expect(CHROMIUM).toMatch(/headless-shell$/);
    site.reports = [];
    const full = await Screenshooter.launch(fullChromium(), { concurrency: 1, userAgent: 'sitefleet-test', sandbox: false, resolve });
    try {
      const camera = await full.site({ width: 800, height: 600, named: named() });
      expect((await camera.shoot(`http://${named()}/page`, SHOT)).png.length).toBeGreaterThan(0);
    } finally {
      await full.close();
    }
    expect(site.reports.sort()).toEqual(['fetch=failed', 'notification=denied', 'popup=closed', 'webrtc=0-candidates', 'ws=failed']);
    expect(inside).toMatchObject({ connections: 0, requests: [], datagrams: 0 });
  });

  it('a page that redirects to the machine’s network, by address or by a name that resolves there, is not shot, and says why', async () => {
    const camera = await shooter.site({ width: 800, height: 600, named: named() });
    try {
      await expect(camera.shoot(`http://${named()}/redirect`, SHOT)).rejects.toThrow(`(refused: 127.0.0.1:${inside.port} is a loopback address)`);
      await expect(camera.shoot(`http://${named()}/redirect-named`, SHOT)).rejects.toThrow(
        '(refused: internal.example resolves to 127.0.0.1, a loopback address (health.allow_private: true allows it))',
      );
    } finally {
      await camera.close();
    }
    expect(inside).toMatchObject({ connections: 0, requests: [] });
  });

  it('a site by a name that resolves to loopback when the browser loads it is refused (the health check’s lookup is not trusted twice); allow_private reaches it', async () => {
    const seen = site.requests.length;
    const camera = await shooter.site({ width: 800, height: 600 });
    try {
      await expect(camera.shoot(`http://shop.example:${site.port}/plain`, SHOT)).rejects.toThrow('(refused: shop.example resolves to 127.0.0.1');
      await expect(camera.shoot(`http://localhost:${site.port}/plain`, SHOT)).rejects.toThrow('(refused: localhost names this machine (localhost))');
      // The playbook named 127.0.0.1 with another port: that port only.
      await expect(camera.shoot(`http://127.0.0.1:${site.port}/plain`, SHOT)).rejects.toThrow(`(refused: 127.0.0.1:${site.port} is a loopback address)`);
    } finally {
      await camera.close();
    }
    expect(site.requests.length).toBe(seen);
    const open = await shooter.site({ width: 800, height: 600, allow_private: true });
    try {
      expect((await open.shoot(`http://shop.example:${site.port}/plain`, SHOT)).png.length).toBeGreaterThan(0);
      await expect(open.shoot(`http://internal.example:${inside.port}/allowed`, SHOT)).resolves.toMatchObject({ height: expect.any(Number) });
    } finally {
      await open.close();
    }
    expect(site.requests.slice(seen).filter((u) => u !== '/favicon.ico')).toEqual(['/plain']);
    expect(inside.requests.filter((u) => u !== '/favicon.ico')).toEqual(['/allowed']);
    inside.requests = [];
  });

  /**
   * One browser of its own, started and closed: what its profile and proxies were while it ran and after
   * (its start is what costs; both tests below read this one life). Its site camera `forgotten` is let go
   * of late, after the browser: nothing left to close, and no error.
   */
  let ownLife: Promise<{ made: string[]; filled: number; removed: boolean; proxies: string[]; answered: string[] }> | undefined;
  const livedOwn = () => (ownLife ??= liveOwn());
  async function liveOwn() {
    const profiles = () => readdirSync(TMP).filter((n) => n.startsWith('playwright_chromiumdev_profile-'));
    const before = profiles();
    const started = vi.spyOn(PageProxy, 'start');
    try {
      const own = await Screenshooter.launch(CHROMIUM, { concurrency: 1, userAgent: 'sitefleet-test', sandbox: false, resolve });
      const made = profiles().filter((n) => !before.includes(n));
      const forgotten = await own.site({ width: 800, height: 600, named: named() });
      await forgotten.shoot(`http://${named()}/plain`, SHOT);
      const filled = readdirSync(`${TMP}/${made[0]}`).length;
      const letGo = await own.site({ width: 800, height: 600, named: named() });
      const proxies = await Promise.all(started.mock.results.map(async (r) => (await (r.value as Promise<PageProxy>)).server));
      await letGo.close();
      await own.close();
      const answered = await Promise.all(proxies.map(answers));
      await forgotten.close();
      return { made, filled, removed: !existsSync(`${TMP}/${made[0]}`), proxies, answered };
    } finally {
      started.mockRestore();
    }
  }

  it('each browser has a throwaway profile, removed when it is closed', async () => {
    const { made, filled, removed } = await livedOwn();
    expect(made).toHaveLength(1);
    expect(filled).toBeGreaterThan(0);
    expect(removed).toBe(true);
  });

  it('a closed browser leaves no proxy of its own listening, that of a site camera nobody let go of included (one kept a run from exiting)', async () => {
    const { proxies, answered } = await livedOwn();
    expect(proxies).toHaveLength(3); // the browser's own, and each camera's
    expect(Object.fromEntries(proxies.map((server, i) => [server, answered[i]]))).toEqual(
      Object.fromEntries(proxies.map((server) => [server, 'ECONNREFUSED'])),
    );
  });
});
