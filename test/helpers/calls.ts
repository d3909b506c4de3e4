import { bodyOperationId } from '../../src/api/answer.js';
import type { CallResult, HostingClient } from '../../src/api/client.js';
import type { ReadAnswers, ReadEndpoint } from '../../src/api/endpoints.js';

/**
 * A read straight through the client, typed by its endpoint's name as `Caller.read` types it (and
 * for the same reason: `call` has held the answer to the endpoint's `response` schema, or thrown).
 * Tests of the client itself use this rather than a Caller, whose retries would hide the error a
 * single call ends with.
 */
export async function read<N extends ReadEndpoint>(client: HostingClient, name: N, params: Record<string, string>, body?: unknown): Promise<ReadAnswers[N]> {
  return (await client.call(name, params, body)).data as ReadAnswers[N];
}

/** The operation a write's answer started, read as the runner reads it; a test fails here when there is none. */
export function operationOf({ data }: CallResult): string {
  const id = bodyOperationId(data);
  if (id === undefined) throw new Error(`the answer names no operation: ${JSON.stringify(data)}`);
  return id;
}
