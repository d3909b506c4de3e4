import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { reportError } from '../../src/cli/report-error.js';
import {
  AbortedError,
  AuthenticationError,
  CoordinationError,
  EXIT,
  InvalidInputError,
  LockedError,
  MalformedResponseError,
  NetworkError,
  NotFoundError,
  notReached,
  RateLimitedTooLongError,
  RequestValidationError,
  ServerError,
  SitefleetError,
  UsageError,
} from '../../src/errors.js';

function report(error: unknown): { code: number; text: string } {
  let text = '';
  const stderr = new Writable({ write: (chunk: Buffer, _e, done) => ((text += chunk.toString()), done()) });
  return { code: reportError(error, stderr), text };
}

describe('every error carries its exit code, and the CLI prints it in one line (and a line of advice where there is one)', () => {
  it.each([
    ['usage', new UsageError('--max-age "x" is not a duration'), EXIT.invalid],
    ['invalid input', new InvalidInputError([{ file: 'p.yaml', line: 3, column: 5, path: 'tasks.0', message: 'bad' }]), EXIT.invalid],
    ['request body', new RequestValidationError('setPhpVersion', [{ path: 'php_version', message: 'bad' }]), EXIT.invalid],
    ['lock', new LockedError('/x.lock', { pid: 1, host: 'h', started_at: 't', command: 'run' }, 'this company', 'remove /x.lock'), EXIT.locked],
    ['authentication', new AuthenticationError(401, 'GET', '/v2/x', 'Unauthorized'), EXIT.stopped],
    ['coordination', new CoordinationError('lost contact with Redis'), EXIT.stopped],
    ['server', new ServerError(500, 'GET', '/v2/x', 'boom'), EXIT.someFailed],
    ['network', new NetworkError('GET /v2/x: connection reset', true), EXIT.someFailed],
    ['aborted', new AbortedError('stopped'), EXIT.someFailed],
    ['base', new SitefleetError('something'), EXIT.someFailed],
  ] as const)('%s', (_, error, code) => {
    const { code: got, text } = report(error);
    expect(got).toBe(code);
    expect(got).toBe(error.exitCode);
    expect(text.trimEnd().split('\n').length).toBeLessThanOrEqual(error instanceof AuthenticationError ? 2 : error instanceof InvalidInputError ? 2 : 1);
  });

  it('the advice of an authentication error says what to check and that nothing changed', () => {
    expect(report(new AuthenticationError(401, 'GET', '/v2/x', 'Unauthorized')).text).toMatch(/\nCheck the API token .* Nothing was changed\.\n$/);
  });

  it('an error that is not ours is "unexpected", exit 1, its stack made safe for the terminal', () => {
    const { code, text } = report(new Error('\u001b[2Jboom'));
    expect(code).toBe(EXIT.someFailed);
    expect(text).toMatch(/^sitefleet: unexpected error: Error: \\x1b\[2Jboom\n/);
  });

  it('a rate limit given up on is exit 1 like any failure of a call', () => {
    expect(report(new RateLimitedTooLongError(600_000, 'GET /v2/x')).code).toBe(EXIT.someFailed);
  });

  it('an error of the first reads that says the service or company was not reached becomes exit 6 with what to check; others stay as they are', () => {
    const where = { baseUrl: 'https://user:secret@api.example.test', company: 'c-1' };
    const company = notReached(new NotFoundError(404, 'GET', '/company/c-1/wp-themes', 'Company c-1 not found'), where);
    expect(company?.exitCode).toBe(EXIT.notReached);
    expect(company?.message).toMatch(/Check the company c-1 .* and the base URL .*; nothing was sent$/);
    const network = notReached(new NetworkError('GET /company/c-1/wp-themes: connect ECONNREFUSED', false), where);
    expect(network?.message).toContain('the service does not answer at https://api.example.test;');
    expect(network?.message).not.toContain('secret');
    expect(notReached(new ServerError(503, 'GET', '/company/c-1/wp-themes', 'down'), where)?.exitCode).toBe(EXIT.notReached);
    expect(notReached(new MalformedResponseError(200, 'GET', '/company/c-1/wp-themes', 'HTML'), where)?.message).toMatch(/answers, but not as the hosting API/);
    // A 401 keeps its own advice and exit 3; a 404 of one environment is that environment's.
    expect(notReached(new AuthenticationError(401, 'GET', '/company/c-1/wp-themes', 'no'), where)).toBeUndefined();
    expect(notReached(new NotFoundError(404, 'GET', '/sites/environments/e-1/backups', 'gone'), where)).toBeUndefined();
  });
});
