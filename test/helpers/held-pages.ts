import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { onTestFinished } from 'vitest';
import type { Simulator } from '../../src/sim/server.js';

/**
 * A front for the simulator's site pages that holds the looks after a write: a page of an environment
 * whose write (a request to `endpoint`) the simulator has answered waits until `release()`; any other
 * page (a look before its write) is served at once. For a test that needs every write out before any
 * look after one ends, whatever the machine's pace. `url`: the pages' template, as `--health-url`
 * takes it. Closed when the test ends.
 */
export async function heldPages(sim: Simulator, endpoint: string): Promise<{ url: string; release: () => void }> {
  let released = false;
  const waiting: (() => void)[] = [];
  const written = (domain: string) => {
    const env = [...sim.fleet.environments.values()].find((e) => e.domains.some((d) => d.name === domain));
    return env !== undefined && sim.log.some((e) => e.endpoint === endpoint && e.path.split('/')[4] === env.id);
  };
  const serve = async (req: IncomingMessage, res: ServerResponse) => {
    const domain = decodeURIComponent((req.url ?? '').split('/')[2] ?? '');
    if (!released && written(domain)) await new Promise<void>((resolve) => waiting.push(resolve));
    const page = await fetch(new URL(req.url ?? '/', sim.baseUrl));
    res.writeHead(page.status, { 'content-type': page.headers.get('content-type') ?? 'text/html' });
    res.end(await page.text());
  };
  const server = createServer((req, res) => void serve(req, res).catch(() => res.destroy()));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  onTestFinished(() => new Promise<void>((resolve) => server.close(() => resolve())));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/sites/{{domain}}/`,
    release: () => {
      released = true;
      for (const go of waiting.splice(0)) go();
    },
  };
}
