import { afterEach, describe, expect, it } from 'vitest';
import { parseRedisUrl, RedisLink } from '../../src/coord/redis/link.js';
import { companyKey } from '../../src/coord/redis/lock.js';
import { RedisWindow } from '../../src/coord/redis/window.js';
import { useRedis } from '../helpers/redis.js';

// Two links are two processes: each its own connection to a real redis-server.
const redis = useRedis();
const links: RedisLink[] = [];
afterEach(async () => {
  for (const link of links.splice(0)) await link.close();
});
const COMPANY = '0f1e2d3c-4b5a-4697-8899-aabbccddeeff';

async function twoProcesses(limit: number, periodMs: number) {
  const r = await redis();
  const [a, b] = await Promise.all([RedisLink.connect(parseRedisUrl(r.url)), RedisLink.connect(parseRedisUrl(r.url))]);
  links.push(a, b);
  return { a, b, wa: new RedisWindow(a, COMPANY, limit, periodMs), wb: new RedisWindow(b, COMPANY, limit, periodMs) };
}

/** The learned rules as the company's Redis keeps them. */
async function rules(link: RedisLink): Promise<{ limit: number; windowMs: number; knownGood: number; quietWindows: number }[]> {
  const state = await link.redis.hget(companyKey(COMPANY, 'limits'), 'state');
  return state ? (JSON.parse(state) as { rules: { limit: number; windowMs: number; knownGood: number; quietWindows: number }[] }).rules : [];
}

/** `n` calls answered in this process's window. */
async function answered(window: RedisWindow, n: number): Promise<void> {
  for (let i = 0; i < n; i++) {
    await window.take();
    window.give({});
  }
}

describe('the shared rate window (real Redis)', () => {
  it('slots are shared: held from sending until one period after the answer, whichever process took them', async () => {
    const { a, wa, wb } = await twoProcesses(10, 500);
    for (let i = 0; i < 10; i++) await wa.take();
    const waiting = new AbortController();
    setTimeout(() => waiting.abort(new Error('still waiting')), 300);
    await expect(wb.take(waiting.signal)).rejects.toThrow('still waiting'); // all ten in flight in the other process
    // From before the answers: Redis dates each as it takes it, never earlier. (From after the ping, a
    // loaded machine's late reply ate into the period: 891 ms measured once beside the whole suite.)
    const t0 = Date.now();
    for (let i = 0; i < 10; i++) wa.give({});
    await a.redis.ping(); // the answers are in Redis (one connection keeps its order)
    await wb.take();
    expect(Date.now() - t0).toBeGreaterThanOrEqual(495); // a period after the answers (ms rounding aside), not at once
  });

  it("each rule of the service has its own shared window: log reads fill theirs, never the general one nor the creating calls'", async () => {
    const { a, b } = await twoProcesses(1, 60_000);
    const logsA = new RedisWindow(a, COMPANY, 1, 60_000, 'logs');
    await logsA.take();
    const held = (key: string) => a.redis.zcard(companyKey(COMPANY, key));
    // The log read holds the one slot of the logs window, and none of the others'.
    expect([await held('logs-window'), await held('window'), await held('create-window')]).toEqual([1, 0, 0]);
    // The general and creation windows of the other process still have their one slot each (a take of a
    // full window waits: the test above), and taking them leaves the logs window as it was.
    await new RedisWindow(b, COMPANY, 1, 60_000).take();
    await new RedisWindow(b, COMPANY, 1, 60_000, 'create').take();
    expect([await held('logs-window'), await held('window'), await held('create-window')]).toEqual([1, 1, 1]);
  });

  it('a 429 seen by one process pauses the other until Retry-After and lowers the limit they share', async () => {
    // A Retry-After longer than the period: what holds the other process back is the pause, not the window
    // (which lets go one period after the answers); not much shorter than the period, so the period's rule learns.
    const { b, wa, wb } = await twoProcesses(10, 500);
    await answered(wa, 4);
    await wa.take();
    // From before the answer: Redis dates the pause from when it is told, never earlier.
    const t0 = Date.now();
    wa.give({ rateLimited: true, retryAfterMs: 1500 });
    await wa.settled(); // the answer and what it taught are in Redis
    expect((await rules(b)).map((r) => r.limit)).toEqual([4]); // what the server let through
    await wb.take();
    expect(Date.now() - t0).toBeGreaterThanOrEqual(1495); // ms rounding aside
    expect(wb.pausedForMs()).toBe(0);
  });

  it('a Retry-After much shorter than the period teaches a shared short-window rule instead', async () => {
    const { b, wa } = await twoProcesses(100, 60_000);
    await answered(wa, 5);
    await wa.take();
    wa.give({ rateLimited: true, retryAfterMs: 1000 });
    await wa.settled();
    // The per-minute limit stands; a rule of 5 a second beside it.
    expect((await rules(b)).map((r) => [r.limit, r.windowMs])).toEqual([
      [100, 60_002],
      [5, 1000],
    ]);
  });

  it('follows the one learned rule: raised after quiet windows that held calls back, and back without a pause when the raise is refused', async () => {
    // Each step waits for the event it is about (an answer in Redis, the rule raised), never for a
    // stretch of time: only the rule's own windows (500 ms) pass, however slow the machine.
    const { a, wa, wb } = await twoProcesses(10, 500);
    await answered(wa, 4);
    await wa.take();
    wa.give({ rateLimited: true }); // counted over one period: 4 let through
    await wa.settled();
    expect((await rules(a)).map((r) => r.limit)).toEqual([4]);
    // Both processes keep sending at the lowered limit; it holds them back, the server says nothing.
    // `wb` holds a slot while `wa` is answered, so that the answer that raises the rule is followed at
    // once, with no wait for a slot, by the refusal of the raise (a probe is a 429 within two windows).
    for (;;) {
      await wb.take();
      await answered(wa, 1);
      await wa.settled();
      if ((await rules(a))[0]!.limit !== 4) break;
      wb.give({});
    }
    expect((await rules(a))[0]).toMatchObject({ limit: 5, knownGood: 4, quietWindows: 5 });
    // The raise is refused at once: back to 4, the wait before the next raise doubles, no pause.
    wb.give({ rateLimited: true, retryAfterMs: 500 });
    await wb.settled();
    expect((await rules(a))[0]).toMatchObject({ limit: 4, knownGood: 4, quietWindows: 10 });
    expect(wb.pausedForMs()).toBe(0);
  });
});
