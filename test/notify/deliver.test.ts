import { describe, expect, it } from 'vitest';
import { deliver } from '../../src/notify/deliver.js';
import { useReceiver } from '../helpers/receiver.js';

const receive = useReceiver();
const policy = { timeoutMs: 5_000, tries: 3, backoffMs: 5, env: {} };

describe('delivering one message', () => {
  it('only a 2xx is delivered: a redirect is not followed and not tried again', async () => {
    const receiver = await receive();
    receiver.status = 301;
    const delivery = await deliver(new URL(receiver.url), { method: 'POST', body: 'x' }, policy);
    expect(delivery).toEqual({ ok: false, tries: 1, error: 'HTTP 301 (a redirect, not followed: give the final URL)' });
    expect(receiver.requests).toHaveLength(1);
  });

  it('a 429 is tried again (after its Retry-After), a 404 is not', async () => {
    const receiver = await receive();
    receiver.status = 429;
    expect(await deliver(new URL(receiver.url), { method: 'POST', body: 'x' }, policy)).toEqual({ ok: false, tries: 3, error: 'HTTP 429' });
    expect(receiver.requests).toHaveLength(3);
    receiver.status = 404;
    expect(await deliver(new URL(receiver.url), { method: 'POST', body: 'x' }, policy)).toEqual({ ok: false, tries: 1, error: 'HTTP 404' });
    receiver.status = 204;
    expect(await deliver(new URL(receiver.url), { method: 'POST', body: 'x' }, policy)).toEqual({ ok: true, tries: 1 });
  });
});
