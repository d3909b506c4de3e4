import { describe, expect, it } from 'vitest';
import type { HealthVerdict } from '../../src/health/http/probe.js';
import { resolveHealth } from '../../src/health/spec.js';
import { beforeWrite, heldBefore } from '../../src/run/life/look-before.js';
import { countsAgainstBudget, isHeldBefore } from '../../src/run/types.js';

const hold = resolveHealth(true).spec!;
const update = resolveHealth({ when_broken_before: 'update' }).spec!;
const healthy: HealthVerdict = { healthy: true, detail: 'HTTP 200' };
const error: HealthVerdict = { healthy: false, detail: 'HTTP 500, page says "There has been a critical error on this website"' };
const forbidden: HealthVerdict = { healthy: false, detail: 'HTTP 403' };
const refusedConnection: HealthVerdict = { healthy: false, detail: 'could not fetch: ECONNREFUSED (3 attempts)', unanswered: true };
const dns: HealthVerdict = { healthy: false, detail: 'could not fetch: ENOTFOUND', unanswered: true };
const timeout: HealthVerdict = { healthy: false, detail: 'timed out after 15s', unanswered: true };
const refusedAddress: HealthVerdict = { healthy: false, detail: 'not checked: shop.test resolves to 10.0.0.5, a private address', refused: true };

describe('the look before a guarded write: sent, or held and why', () => {
  it.each([
    ['no look taken', undefined, 'hold', 'send'],
    ['no look taken', undefined, 'update', 'send'],
    ['an address a check may not reach', refusedAddress, 'hold', 'unseen'],
    ['an address a check may not reach', refusedAddress, 'update', 'unseen'],
    ['healthy', healthy, 'hold', 'send'],
    ['healthy', healthy, 'update', 'send'],
    ['a 500 with the critical error', error, 'hold', 'broken_before'],
    ['a 403', forbidden, 'hold', 'broken_before'],
    ['a refused connection', refusedConnection, 'hold', 'unseen'],
    ['DNS failing', dns, 'hold', 'unseen'],
    ['a timeout', timeout, 'hold', 'unseen'],
    ['a 500 with the critical error', error, 'update', 'send'],
    ['a refused connection', refusedConnection, 'update', 'send'],
  ] as const)('%s, when_broken_before: %s → %s', (_what, before, when, decision) => {
    expect(beforeWrite(before, when === 'hold' ? hold : update)).toBe(decision);
  });

  it('the held result: nothing sent, its health "unhealthy before" with what the look saw, counted against the budget', () => {
    const url = 'http://127.0.0.1:1/sites/a.example/';
    const held = heldBefore('0:a', url, refusedConnection, hold)!;
    expect(held).toEqual({
      step_id: '0:a',
      status: 'held',
      http_status: null,
      operation_id: null,
      attempts: 0,
      error: null,
      reason: `unseen: no answer from ${url} before the write (could not fetch: ECONNREFUSED (3 attempts)); not updated`,
      held: {
        code: 'unseen',
        url,
        detail: 'could not fetch: ECONNREFUSED (3 attempts)',
        override: expect.stringContaining('health.url'),
        counts_against_budget: true,
      },
      health: { url, outcome: 'unhealthy before', before: 'could not fetch: ECONNREFUSED (3 attempts)' },
    });
    expect(isHeldBefore(held)).toBe(true);
    expect(countsAgainstBudget(held.status, held.held?.counts_against_budget === true)).toBe(true);
    expect(heldBefore('0:a', url, error, hold)).toMatchObject({
      held: { code: 'broken_before' },
      reason: expect.stringMatching(/^broken_before: .* answered HTTP 500/),
    });
    expect(heldBefore('0:a', url, error, update)).toBeUndefined();
    expect(heldBefore('0:a', url, healthy, hold)).toBeUndefined();
    expect(heldBefore('0:a', undefined, error, hold)).toBeUndefined();
    expect(heldBefore('0:a', url, error, undefined)).toBeUndefined();
  });

  it('when_broken_before is carried only when the playbook says update (a plan without it holds)', () => {
    expect(hold).not.toHaveProperty('when_broken_before');
    expect(resolveHealth({ when_broken_before: 'hold' }).spec).not.toHaveProperty('when_broken_before');
    expect(update).toMatchObject({ when_broken_before: 'update' });
  });
});
