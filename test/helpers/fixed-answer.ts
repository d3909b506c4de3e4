import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { HostingClient } from '../../src/api/client.js';

/**
 * A server on 127.0.0.1 that answers every request with one fixed answer (a recorded shape of the
 * real service), a client for it, and the paths it was asked for. `close` stops both.
 */
export async function answering(status: number, body: unknown) {
  const paths: string[] = [];
  const server = createServer((req, res) => {
    paths.push(req.url ?? '');
    res.writeHead(status, { 'content-type': 'application/json' });
    res.end(JSON.stringify(body));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const client = new HostingClient({ baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, token: 't' });
  return {
    client,
    paths,
    async close() {
      await client.close();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}
