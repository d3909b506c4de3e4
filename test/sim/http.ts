import { request, type Dispatcher } from 'undici';
import type { Simulator } from '../../src/sim/server.js';

/** An answer of the simulator's API as a client sees it on the wire. */
export interface WireAnswer {
  status: number;
  // Tests look into the JSON they were given, field by field.
  body: any; // eslint-disable-line @typescript-eslint/no-explicit-any
}

/** One call to the simulator's API at `/v2{path}`, bypassing the client: the tests here are about the shapes themselves. */
export async function call(sim: Simulator, method: Dispatcher.HttpMethod, path: string, body?: unknown, token = sim.token): Promise<WireAnswer> {
  const res = await request(`${sim.baseUrl}/v2${path}`, {
    method,
    headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: res.statusCode, body: await res.body.json() };
}

/** `GET /operations/{id}`, the id URL-encoded as the client sends it (a `:` becomes `%3A`). */
export function operation(sim: Simulator, id: string): Promise<WireAnswer> {
  return call(sim, 'GET', `/operations/${encodeURIComponent(id)}`);
}

/** Reads an operation until it is no longer running (its body's status is not 202), for at most `timeoutMs`. */
export async function settled(sim: Simulator, id: string, timeoutMs = 5000): Promise<WireAnswer> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const answer = await operation(sim, id);
    if (answer.status !== 404 && answer.body.status !== 202) return answer;
    if (Date.now() > deadline) throw new Error(`operation ${id} still running after ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** Starts an asynchronous call and reads its operation to the end: the accepted answer, then the last one. */
export async function runToEnd(
  sim: Simulator,
  method: Dispatcher.HttpMethod,
  path: string,
  body: unknown,
): Promise<{ accepted: WireAnswer; done: WireAnswer }> {
  const accepted = await call(sim, method, path, body);
  if (typeof accepted.body.operation_id !== 'string') throw new Error(`no operation: ${JSON.stringify(accepted)}`);
  return { accepted, done: await settled(sim, accepted.body.operation_id as string) };
}
