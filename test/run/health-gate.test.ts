import { describe, expect, it } from 'vitest';
import type { ProbeResult, SiteProbePort } from '../../src/health/http/probe.js';
import { resolveHealth } from '../../src/health/spec.js';
import { baselineOf, HealthGate, healthRecord } from '../../src/run/health-gate.js';
import { ManualClock } from '../helpers/manual-clock.js';

/** Answers from a script, one per probe, each when the test releases it; counts how many ran at once. */
function scripted(answers: ProbeResult[]) {
  let running = 0;
  let most = 0;
  const release: (() => void)[] = [];
  const port: SiteProbePort = {
    async probe() {
      running++;
      most = Math.max(most, running);
      await new Promise<void>((r) => release.push(r));
      running--;
      return answers.shift() ?? { status: 200, url: 'u' };
    },
  };
  return { port, release, most: () => most };
}

const ok: ProbeResult = { status: 200, url: 'u' };
const broken: ProbeResult = { status: 500, url: 'u', matched: 'There has been a critical error on this website' };

describe('HealthGate', () => {
  it('tries again `interval` apart on the run’s clock and is healthy at the first healthy answer', async () => {
    const clock = new ManualClock();
    const probe = scripted([broken, broken, ok]);
    const gate = new HealthGate(probe.port, resolveHealth({ attempts: 3, interval: '5s' }).spec!, clock);
    const verdict = gate.check('http://site/');
    await clock.advance(0);
    probe.release.shift()!();
    await clock.advance(4_999);
    expect(probe.release).toHaveLength(0); // the second attempt waits the interval
    await clock.advance(1);
    probe.release.shift()!();
    await clock.advance(5_000);
    probe.release.shift()!();
    expect(await verdict).toEqual({ healthy: true, detail: 'HTTP 200 (3 attempts)' });
  });

  it('unhealthy after its attempts, naming what the page said', async () => {
    const clock = new ManualClock();
    const probe = scripted([broken, broken]);
    const gate = new HealthGate(probe.port, resolveHealth({ attempts: 2, interval: '1s' }).spec!, clock);
    const verdict = gate.check('http://site/');
    await clock.advance(0);
    probe.release.shift()!();
    await clock.advance(1_000);
    probe.release.shift()!();
    expect(await verdict).toEqual({ healthy: false, detail: 'HTTP 500, page says "There has been a critical error on this website" (2 attempts)' });
  });

  it('keeps to its own bound on checks in flight', async () => {
    const clock = new ManualClock();
    const probe = scripted([]);
    const gate = new HealthGate(probe.port, resolveHealth({ concurrency: 3 }).spec!, clock);
    let done = false;
    const all = Promise.all(Array.from({ length: 10 }, (_, i) => gate.check(`http://site-${i}/`))).finally(() => (done = true));
    while (!done) {
      await clock.advance(0);
      probe.release.shift()?.();
    }
    expect((await all).every((v) => v?.healthy)).toBe(true);
    expect(probe.most()).toBe(3);
  });

  it('a refused address is not tried again: nothing was sent, and the verdict says so', async () => {
    const clock = new ManualClock();
    const refused = 'shop.example resolves to 10.0.0.5, a private address (health.allow_private: true allows it)';
    const probe = scripted([{ status: null, url: 'u', refused }, ok]);
    const gate = new HealthGate(probe.port, resolveHealth({ attempts: 3, interval: '1s' }).spec!, clock);
    const verdict = gate.check('http://shop.example/');
    await clock.advance(0);
    probe.release.shift()!();
    expect(await verdict).toEqual({ healthy: false, refused: true, detail: `not checked: ${refused}` });
    expect(probe.release).toHaveLength(0);
  });

  it('interrupted, it gives no verdict: a site is never called broken because the run stopped', async () => {
    const clock = new ManualClock();
    const probe = scripted([broken]);
    const interrupt = new AbortController();
    const gate = new HealthGate(probe.port, resolveHealth({ attempts: 3 }).spec!, clock, interrupt.signal);
    const verdict = gate.check('http://site/');
    await clock.advance(0);
    interrupt.abort();
    probe.release.shift()!();
    expect(await verdict).toBeUndefined();
  });
});

describe('baselineOf: the look before a write, read back from the record a halt left', () => {
  const healthy = { healthy: true, detail: 'HTTP 200' };
  const down = { healthy: false, detail: 'HTTP 500' };
  it.each([
    ['healthy before, no look after', healthRecord('u', healthy, undefined), healthy],
    ['broken before, no look after', healthRecord('u', down, undefined), down],
    ['looked at after: the life ended', healthRecord('u', healthy, down), undefined],
    ['no look before', healthRecord('u', undefined, undefined), undefined],
    ['no record', undefined, undefined],
  ])('%s', (_, record, verdict) => expect(baselineOf(record)).toEqual(verdict));
});
