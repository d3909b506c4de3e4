import { getEventListeners } from 'node:events';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { sharedStop } from '../../src/app/signals.js';
import { sleepOn, systemClock } from '../../src/util/clock.js';

describe('a stop many waits share (the run’s interrupt and halt, a restore’s, status --wait’s)', () => {
  const warnings: Error[] = [];
  const onWarning = (w: Error) => warnings.push(w);
  beforeEach(() => void process.on('warning', onWarning));
  afterEach(() => void process.off('warning', onWarning));

  it('holds a listener per wait under way without Node’s leak warning, and none once the waits ended', async () => {
    const stop = sharedStop();
    const waits = Array.from({ length: 25 }, (_, i) => sleepOn(systemClock, 5 + i, stop.signal));
    expect(getEventListeners(stop.signal, 'abort')).toHaveLength(25);
    await Promise.all(waits);
    // The warning is emitted on the next tick after the 11th listener: the waits above have given it time.
    expect(warnings.filter((w) => w.name === 'MaxListenersExceededWarning')).toEqual([]);
    expect(getEventListeners(stop.signal, 'abort')).toHaveLength(0);
  });

  it('a plain controller would have warned: the test sees the warning it guards against', async () => {
    const plain = new AbortController();
    const waits = Array.from({ length: 11 }, () => sleepOn(systemClock, 5, plain.signal));
    await Promise.all(waits);
    expect(warnings.map((w) => w.name)).toContain('MaxListenersExceededWarning');
  });
});
