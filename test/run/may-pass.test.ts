import { describe, expect, it } from 'vitest';
import { writeVerdict } from '../../src/run/may-pass.js';
import type { StepResult } from '../../src/run/types.js';

const end = (over: Partial<StepResult>): StepResult => ({
  step_id: '0:e',
  status: 'failed',
  http_status: null,
  operation_id: null,
  attempts: 1,
  error: null,
  reason: null,
  ...over,
});

describe('what a write’s end says for retry_later', () => {
  it.each([
    ['succeeded', { status: 'succeeded', http_status: 202 }, 'succeeded'],
    ['skipped', { status: 'skipped' }, undefined],
    ['held for a look', { status: 'held', http_status: 202 }, undefined],
    ['undone by a restore', { reason: 'undone: another write broke the site' }, undefined],
    ['restored', { restored: { backup_id: 1, operation_id: 'op', status: 'succeeded' } }, undefined],
    ['down before the write', { http_status: 202, health: { url: 'https://a.test/', outcome: 'unhealthy before' } }, 'may pass'],
    ['broke the site, not restored', { http_status: 202, health: { url: 'https://a.test/', outcome: 'unhealthy' } }, undefined],
    [
      'never sent: no domain to check (on_missing_domain: fail)',
      { attempts: 0, reason: 'health: no domain to check; not updated (on_missing_domain: fail)' },
      undefined,
    ],
    [
      'never sent: an address that may not be checked',
      { attempts: 0, reason: 'health: 10.0.0.1 is private; not updated (on_missing_domain: fail)' },
      undefined,
    ],
    ['no answer', { status: 'unknown' }, 'may pass'],
    ['503', { http_status: 503, error: 'ServerError: 503' }, 'may pass'],
    ['429', { http_status: 429 }, 'may pass'],
    ['422', { http_status: 422, error: 'HttpError: 422' }, 'final'],
    ['404', { http_status: 404 }, 'final'],
    ['operation failed', { http_status: 202, error: 'OperationFailed: the service could not complete the change' }, 'may pass'],
    ['network', { error: 'NetworkError: socket hang up' }, 'may pass'],
    ['read back another version', { http_status: 202, reason: 'the environment runs forms 1.0, not 2.0 as judged' }, 'final'],
    [
      'read back on the version it replaced (not_updated)',
      {
        http_status: 202,
        reason: 'forms stays on 1.0: the service ran the update',
        failure: { code: 'not_updated', stays: [{ name: 'forms', version: '1.0' }] },
      },
      'may pass',
    ],
  ] as const)('%s', (_, over, verdict) => {
    expect(writeVerdict(end(over as Partial<StepResult>))).toBe(verdict);
  });
});
