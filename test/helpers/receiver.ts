import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach } from 'vitest';

export interface Received {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  body: string;
}

export interface Receiver {
  /** `http://127.0.0.1:PORT` */
  url: string;
  requests: Received[];
  /** The status every request is answered with (200 unless the test changes it). */
  status: number;
  /** Called as each request arrives, before it is answered: what the test compares with (the simulator's log). */
  onRequest?: (request: Received) => void;
}

/** A plain HTTP server on 127.0.0.1 that records what a ping or webhook sends; stopped after each test. */
export function useReceiver() {
  const started: (() => Promise<void>)[] = [];
  afterEach(async () => {
    for (const stop of started.splice(0)) await stop();
  });
  return async (): Promise<Receiver> => {
    const receiver: Receiver = { url: '', requests: [], status: 200 };
    const server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const request = { method: req.method!, path: req.url!, headers: req.headers, body: Buffer.concat(chunks).toString('utf8') };
        receiver.requests.push(request);
        receiver.onRequest?.(request);
        res.writeHead(receiver.status, { 'content-type': 'text/plain' }).end('OK');
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    receiver.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    started.push(
      () =>
        new Promise<void>((resolve) => {
          server.closeAllConnections();
          server.close(() => resolve());
        }),
    );
    return receiver;
  };
}
