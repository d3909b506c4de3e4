import { describe, expect, it } from 'vitest';
import { operationData, reasonText, serviceReason, writeAnswer } from '../../src/api/answer.js';
import { AuthenticationError, HttpError } from '../../src/errors.js';
import { commandOutput } from '../../src/actions/wp-cli-run.js';
import { ACTIONS } from '../../src/actions/index.js';
import { answering } from '../helpers/fixed-answer.js';
import { carried, OPERATION_DATA_CHARS, operationEnd, OUTPUT_CHARS } from '../../src/run/operation-end.js';

/** The recorded failure (shared/real-service-notes.md, "What recorded answers add"). */
const OUTER = 'Operation failed! Please refer to `data` for more details.';
const IN_USE = 'This domain "example.com" is already in use';
const FAILED = { status: 500, message: OUTER, data: { status: 500, message: IN_USE, data: null } };
const ENV = '00000000-0000-4000-8000-000000000000';

describe('the reason a failure gives', () => {
  it('is the most specific message the answer holds; the outer one is kept as context', () => {
    expect(serviceReason(FAILED)).toEqual({ message: IN_USE, context: OUTER });
    expect(reasonText(serviceReason(FAILED)!)).toBe(`${IN_USE} (the service's summary: ${OUTER})`);
    // Flat answers, and nested data without a message (the spec profile's `{operation_id}`), keep their own message.
    expect(serviceReason({ status: 500, message: 'php failed', data: { operation_id: 'x' } })).toEqual({ message: 'php failed' });
    expect(serviceReason({ status: 401, message: 'Unauthenticated.', data: null })).toEqual({ message: 'Unauthenticated.' });
    // From practice, "under data.message": found without a nested status too.
    expect(serviceReason({ message: 'outer', data: { message: 'RRSet with DNS name foo. is not permitted in zone bar.' } })).toEqual({
      message: 'RRSet with DNS name foo. is not permitted in zone bar.',
      context: 'outer',
    });
    expect(serviceReason({ status: 500 })).toBeUndefined();
    expect(serviceReason('text')).toBeUndefined();
  });

  it('is looked for a few levels deep, no further', () => {
    const nest = (depth: number): unknown => (depth === 0 ? { message: 'deepest' } : { message: `level ${depth}`, data: nest(depth - 1) });
    expect(serviceReason(nest(4))!.message).toBe('deepest');
    expect(serviceReason(nest(9))!.message).toBe('level 5');
  });

  it('a write refused in its first answer carries the nested reason', () => {
    expect(writeAnswer(FAILED)).toEqual({ kind: 'refused', status: 500, reason: { message: IN_USE, context: OUTER } });
  });

  it('an operation that failed ends with the nested reason as its reason and the outer text in its error', () => {
    expect(operationEnd('domains.add', { state: 'failed', message: IN_USE, context: OUTER, polls: 1 }, null)).toEqual({
      status: 'failed',
      reason: `operation failed: ${IN_USE}`,
      error: `OperationFailed: ${IN_USE} (the service's summary: ${OUTER})`,
    });
  });
});

describe('the data of a finished operation', () => {
  it('is what `data` holds, unless it is nothing or only the operation’s own id', () => {
    expect(operationData({ status: 200, data: { idEnv: 'e-1' } }, 'op-1')).toEqual({ idEnv: 'e-1' });
    expect(operationData({ status: 200, data: null }, 'op-1')).toBeUndefined();
    expect(operationData({ status: 200, data: { operation_id: 'op-1' } }, 'op-1')).toBeUndefined();
    expect(operationData({ status: 200, data: { operation_id: 'other' } }, 'op-1')).toEqual({ operation_id: 'other' });
  });

  it('is kept exactly; past its bound it is cut to its beginning, with its size', () => {
    expect(carried('php.set_version', { note: 'ok' })).toEqual({ operation_data: { note: 'ok' } });
    const big = { blob: 'x'.repeat(OPERATION_DATA_CHARS) };
    const cut = carried('php.set_version', big);
    expect(cut.operation_data).toBeUndefined();
    expect(cut.operation_data_cut).toEqual({ chars: JSON.stringify(big).length, head: JSON.stringify(big).slice(0, OPERATION_DATA_CHARS) });
    let deep: unknown = 'bottom';
    for (let i = 0; i < 40; i++) deep = [deep];
    expect(carried('php.set_version', deep).operation_data_cut).toBeDefined();
  });

  it('the creating actions read the id of what they made, under the real service’s names', () => {
    for (const name of ['environments.create', 'environments.create_plain', 'environments.clone'])
      expect(carried(name, { idEnv: 'new-env' }).created, name).toEqual({ env_id: 'new-env' });
    expect(carried('sites.create_plain', { idSite: 'new-site' }).created).toEqual({ site_id: 'new-site' });
    expect(carried('environments.create', { idSite: 'x' }).created).toBeUndefined();
    expect(carried('environments.push', { idEnv: 'x' }).created).toBeUndefined();
    expect(carried('environments.create', { idEnv: 'x'.repeat(201) }).created).toBeUndefined();
    expect(carried('environments.create', undefined)).toEqual({});
  });

  it('a WP-CLI step reads what the command printed, wherever the sources put it, and says null when nothing came', () => {
    expect(commandOutput({ result: '6.4.3' })).toEqual({ output: '6.4.3' });
    expect(commandOutput({ output: 'Success: flushed' })).toEqual({ output: 'Success: flushed' });
    expect(commandOutput({ result: 12 })).toEqual({ output: '12' });
    expect(commandOutput({ result: ['a', 'b'] })).toEqual({ output: 'a\nb' });
    expect(commandOutput('plain text')).toEqual({ output: 'plain text' });
    expect(commandOutput(undefined)).toEqual({ output: null });
    expect(commandOutput({ result: null })).toEqual({ output: null });
    expect(carried('wp_cli.run', undefined)).toEqual({ output: null });
    const long = carried('wp_cli.run', { result: 'y'.repeat(OUTPUT_CHARS + 5) });
    expect(long.output).toHaveLength(OUTPUT_CHARS);
    expect(long.output_cut).toBe(OUTPUT_CHARS + 5);
    expect('readOperation' in ACTIONS.get('themes.update')!).toBe(false);
  });
});

describe('answers of the real service, read by the client', () => {
  it('a failed operation’s nested reason and a finished one’s data; an opaque operation id is followed as it is', async () => {
    const failed = await answering(200, FAILED);
    try {
      const id = 'cli:run-wp-cli-7d3a1e2b-1111-4222-8333-444455556666';
      expect(await failed.client.getOperation(id)).toEqual({ operation_id: id, state: 'failed', http_status: 200, message: IN_USE, context: OUTER });
      expect(failed.paths).toEqual([`/v2/operations/${encodeURIComponent(id)}`]);
      await failed.client.getOperation('opaque 42');
      expect(failed.paths[1]).toBe('/v2/operations/opaque%2042');
    } finally {
      await failed.close();
    }
    const done = await answering(200, { status: 200, message: 'done', data: { idEnv: 'env-9' } });
    try {
      expect(await done.client.getOperation('op')).toMatchObject({ state: 'succeeded', data: { idEnv: 'env-9' } });
    } finally {
      await done.close();
    }
  });

  it('a synchronous endpoint’s error names the nested reason; a 401 body of the real service is an authentication error', async () => {
    const refused = await answering(400, {
      status: 400,
      message: 'Validation failed',
      data: { status: 400, message: 'ip_list: 10.0.0.300 is not an address', data: null },
    });
    try {
      const error = (await refused.client.call('setDeniedIps', {}, { environment_id: ENV, ip_list: ['10.0.0.1'] }).catch((e: unknown) => e)) as HttpError;
      expect(error).toBeInstanceOf(HttpError);
      expect(error.message).toContain('ip_list: 10.0.0.300 is not an address');
      expect(error.message).toContain('Validation failed');
    } finally {
      await refused.close();
    }
    const unauthenticated = await answering(401, { status: 401, message: 'Unauthenticated.', data: null });
    try {
      const error = await unauthenticated.client.call('listBackups', { env_id: ENV }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(AuthenticationError);
      expect((error as Error).message).toContain('Unauthenticated.');
    } finally {
      await unauthenticated.close();
    }
  });
});
