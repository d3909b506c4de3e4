import { MalformedResponseError, NotFoundError, ServerError } from '../errors.js';
import { bodyStatus, operationData, operationState, serviceReason } from './answer.js';
import { DEFAULT_OPERATION_PATH, ENDPOINTS, fillPath, type Endpoint, type EndpointName } from './endpoints.js';
import { Transport, type TransportOptions } from './http.js';
import { assertValidBody, assertValidResponse } from './request-schemas.js';
import type * as T from './types.js';

export interface ClientOptions extends TransportOptions {
  /** Path of the operation status endpoint; `{operation_id}` is filled in. */
  operationPath?: string;
}

export interface CallOptions {
  signal?: AbortSignal;
  /** Parameters also sent in the query string (a listing behind a proxy that drops GET bodies). */
  query?: Record<string, string | number>;
}

export interface CallResult {
  status: number;
  data: unknown;
}

/**
 * The API by endpoint name: `call` sends any endpoint of the table in endpoints.ts, `getOperation`
 * reads an operation's status. Every body is checked against its schema in `schemas/api/` first: an
 * invalid request throws RequestValidationError and is never sent. An answer is checked as far as its
 * endpoint's entry says, else MalformedResponseError: an asynchronous endpoint's answer that says the
 * work is running must name its operation, and a read's must hold its `response` schema (so
 * `Caller.read` can type it by the endpoint's name). The synchronous writes have no answer schema:
 * their answers come back as sent, and their actions read them defensively.
 */
export class HostingClient {
  readonly transport: Transport;
  readonly #operationPath: string;

  constructor(options: ClientOptions) {
    this.transport = new Transport(options);
    this.#operationPath = options.operationPath ?? DEFAULT_OPERATION_PATH;
  }

  /**
   * The one way an endpoint is called: the runner's steps and reads go through it (`Caller`). Every
   * body is checked against its schema before it leaves, whoever built it (a plan, a saved plan, a journal).
   */
  async call(name: EndpointName, params: Record<string, string>, body?: unknown, options: CallOptions = {}): Promise<CallResult> {
    const { signal, query } = options;
    const endpoint: Endpoint = ENDPOINTS[name];
    const path = fillPath(endpoint.path, params);
    if (endpoint.body) assertValidBody(endpoint.body, `${endpoint.method} ${endpoint.path}`, body ?? {});
    const search = query ? `?${new URLSearchParams(Object.fromEntries(Object.entries(query).map(([k, v]) => [k, String(v)]))).toString()}` : '';
    const response = await this.transport.send(endpoint.method, path + search, endpoint.body ? (body ?? {}) : undefined, signal);
    if (endpoint.operation) assertAccepted(response, endpoint.method, path);
    if (endpoint.response) assertValidResponse(endpoint.response, endpoint.method, path, response.status, response.data);
    return response;
  }

  /**
   * Where an operation stands. The body's `status` decides (see answer.ts): the real service answers
   * terminal states with HTTP 200 and the outcome in the body. Without one, the code: 202 running,
   * 200 done; an HTTP 500 is a failure and a 404 an id it does not know (also, for up to a minute,
   * right after the operation started).
   */
  async getOperation(operationId: string, signal?: AbortSignal): Promise<T.OperationStatus> {
    const path = fillPath(this.#operationPath, { operation_id: operationId });
    try {
      const { status, data } = await this.transport.send('GET', path, undefined, signal);
      const state = operationState(status, data);
      const reason = serviceReason(data);
      const told = state === 'succeeded' ? operationData(data, operationId) : undefined;
      return {
        operation_id: operationId,
        state,
        http_status: status,
        ...(reason && { message: reason.message, ...(reason.context !== undefined && { context: reason.context }) }),
        ...(told !== undefined && { data: told }),
      };
    } catch (error) {
      if (error instanceof NotFoundError) return { operation_id: operationId, state: 'not_found', http_status: 404, message: error.serverMessage };
      if (error instanceof ServerError && error.status === 500) {
        return { operation_id: operationId, state: 'failed', http_status: 500, message: error.serverMessage };
      }
      throw error;
    }
  }

  close(): Promise<void> {
    return this.transport.close();
  }
}

function obj(value: unknown): Record<string, unknown> {
  return typeof value === 'object' && value !== null ? (value as Record<string, unknown>) : {};
}

/**
 * An asynchronous endpoint's answer: any 2xx will do (an operation started, or the work done at once:
 * the vendor's document answers theme bulk updates with 200), but one that says it is running (202)
 * must say which operation, or nothing could follow it.
 */
function assertAccepted(response: CallResult, method: string, path: string): void {
  const id = obj(response.data).operation_id;
  const running = (bodyStatus(response.data) ?? response.status) === 202;
  if (id === undefined || id === null ? running : typeof id !== 'string' || id === '') {
    throw new MalformedResponseError(response.status, method, path, 'an answer that says the work is running must carry an operation_id');
  }
}
