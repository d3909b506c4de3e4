import { describe, expect, it } from 'vitest';
import type { SlotOutcome, WindowLane } from '../../src/coord/types.js';
import { RateLimitError, ServerError, AbortedError } from '../../src/errors.js';
import { inPlace, retrying, sending, throttled, type Attempt, type Limit, type Send } from '../../src/run/call-pipeline.js';
import { PRIORITY } from '../../src/run/rate-budget.js';
import { DEFAULT_RETRY } from '../../src/run/retry.js';
import { silent } from '../helpers/run.js';

/** A limit that records what it was told, and can be made to wait. */
function recorder(lane: WindowLane, log: string[], wait?: Promise<void>): Limit {
  return {
    lane,
    take: async (signal) => {
      log.push(`take ${lane}`);
      if (wait) await Promise.race([wait, new Promise((_, reject) => signal?.addEventListener('abort', () => reject(signal.reason as Error)))]);
    },
    give: (outcome: SlotOutcome) => log.push(`give ${lane} ${JSON.stringify(outcome)}`),
  };
}

const request = { attempt: 1, endpoint: 'addManualBackup' as const, priority: PRIORITY.write };
const answered: Send<string> = () => Promise.resolve({ sent: true, ok: true, value: 'ok' });
const refused =
  (retryAfterMs: number): Send<string> =>
  () =>
    Promise.resolve({ sent: true, ok: false, error: new RateLimitError('POST', '/x', 'slow down', retryAfterMs), slot: { rateLimited: true, retryAfterMs } });

describe('the call pipeline, a layer at a time', () => {
  it('throttled takes its limits in order and gives each back with what the attempt did', async () => {
    const log: string[] = [];
    const send = throttled(
      () => [recorder('create', log), recorder('general', log)],
      () => undefined,
      answered,
    );
    expect(await send(request)).toEqual({ sent: true, ok: true, value: 'ok' });
    expect(log).toEqual(['take create', 'take general', 'give create {}', 'give general {}']);
  });

  it('a 429 teaches only the limit that refused; the others are told the call was not sent', async () => {
    const log: string[] = [];
    const send = throttled(
      () => [recorder('create', log), recorder('general', log)],
      (_e, slot) => (slot.rateLimited ? 'create' : undefined),
      refused(1000),
    );
    await send(request);
    expect(log.slice(2)).toEqual(['give create {"rateLimited":true,"retryAfterMs":1000}', 'give general {"notSent":true}']);
  });

  it('a stop while waiting for a limit gives back what it took and sends nothing', async () => {
    const log: string[] = [];
    const stop = new AbortController();
    let sent = false;
    const send = throttled(
      () => [recorder('create', log), recorder('general', log, new Promise(() => undefined))],
      () => undefined,
      () => ((sent = true), answered(request)),
    );
    const pending = send({ ...request, signal: stop.signal });
    await new Promise((r) => setTimeout(r, 5));
    stop.abort(new Error('stop'));
    expect((await pending).sent).toBe(false);
    expect(sent).toBe(false);
    expect(log).toEqual(['take create', 'take general', 'give create {"notSent":true}']);
  });

  it('inPlace sends nothing when the run stopped while the call waited for its place', async () => {
    const stop = new AbortController();
    let sent = false;
    const takePlace = async <R>(_p: number, _e: string, work: () => Promise<R>) => {
      stop.abort();
      return work();
    };
    const send = inPlace(takePlace, () => ((sent = true), answered(request)));
    expect(await send({ ...request, signal: stop.signal })).toEqual({ sent: false });
    expect(sent).toBe(false);
  });

  it('sending: a journal that fails before the send leaves the slot unused', async () => {
    const send = sending(
      () => Promise.resolve('never'),
      () => {
        throw new Error('disk full');
      },
    );
    const attempt = (await send(request)) as Extract<Attempt<string>, { ok: false }>;
    expect(attempt.slot).toEqual({ notSent: true });
    expect((attempt.error as Error).message).toBe('disk full');
  });

  it('sending: a refusal at the last moment (the window closed) is no attempt at all, as a stop while waiting', async () => {
    let sent = false;
    const send = sending(
      () => ((sent = true), Promise.resolve('never')),
      () => {
        throw new AbortedError('not sent: no write starts after the window closed');
      },
    );
    const attempt = await send(request);
    expect(attempt.sent).toBe(false);
    expect(sent).toBe(false);
  });

  it('retrying retries what is safe to repeat, and gives up on 429s after the policy wait (timed by the injected clock)', async () => {
    let calls = 0;
    const flaky: Send<string> = () =>
      ++calls < 3 ? Promise.resolve({ sent: true, ok: false, error: new ServerError(503, 'GET', '/x', 'busy'), slot: {} }) : answered(request);
    const policy = { ...DEFAULT_RETRY, baseDelayMs: 1, maxDelayMs: 2 };
    const base = { policy, logger: silent, endpoint: 'listApiKeys' as const, idempotent: true, priority: PRIORITY.write };
    expect(await retrying(base, flaky)).toMatchObject({ ok: true, value: 'ok', attempts: 3 });

    let now = 0;
    const limited: Send<string> = () => ((now += 60_000), refused(1)(request));
    const outcome = await retrying({ ...base, policy: { ...policy, rateLimitWaitMs: 120_000 }, now: () => now }, limited);
    expect(outcome.ok).toBe(false);
    expect((outcome.error as Error).name).toBe('RateLimitedTooLongError');
    expect(outcome.attempts).toBe(3);
  });
});
