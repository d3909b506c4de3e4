import { describe, expect, it } from 'vitest';
import type { BatchConfirm, StepOutcome } from '../../src/actions/action.js';
import type { Inventory } from '../../src/inventory/inventory.js';
import { BatchConfirmer, readListing, type Settled } from '../../src/run/batch-confirm.js';
import pino from 'pino';
import { Writable } from 'node:stream';
import { ServerError } from '../../src/errors.js';
import type { CallPort } from '../../src/run/caller.js';
import { PRIORITY } from '../../src/run/rate-budget.js';
import { DurationModel } from '../../src/run/duration-model.js';
import { ManualClock } from '../helpers/manual-clock.js';

const WALL0 = Date.parse('2026-11-22T02:00:00.000Z');

/** A listing as the fake service holds it: which environments show their work done, and when it was last updated. */
function fakeService(clock: ManualClock) {
  const done = new Set<string>();
  let lastUpdatedWall = WALL0;
  const reads: { at: number; searches: string[]; urgent: boolean }[] = [];
  const listing = (): Inventory => ({
    company: 'c',
    environments: [...done].map((id) => ({ id, site: 's', name: id, items: { theme: [] } })),
    listed: { theme: { count: 0 } },
    last_updated_at: new Date(lastUpdatedWall).toISOString(),
  });
  return {
    done,
    reads,
    setUpdated: (wall: number) => (lastUpdatedWall = wall),
    read: (searches: string[], urgent: boolean) => {
      reads.push({ at: clock.now(), searches, urgent });
      return Promise.resolve(listing());
    },
  };
}

const confirm: BatchConfirm = {
  searches: (steps) => [...new Set(steps.map((s) => s.target.site!))],
  shows: (step, listing) => listing.environments.some((e) => e.id === step.target.env_id),
};
const step = (id: string): StepOutcome => ({ target: { env_id: id, site: 'astra' } });

function learned(kind: string, ms: number): DurationModel {
  const model = new DurationModel();
  model.record(kind, 0, ms);
  model.record(kind, 0, ms);
  return model;
}

describe('BatchConfirmer', () => {
  it('one read at the predicted moment settles every operation it shows done', async () => {
    const clock = new ManualClock();
    const service = fakeService(clock);
    const confirmer = new BatchConfirmer({ read: service.read, model: learned('k', 4000), clock });
    const settled: Promise<Settled>[] = [];
    for (let i = 0; i < 50; i++) settled.push(confirmer.settle('k', confirm, step(`e${i}`), { acceptedAt: 0, acceptedWall: WALL0, timeoutMs: 60_000 }).done);
    await clock.advance(3_999);
    expect(service.reads).toHaveLength(0);
    for (let i = 0; i < 50; i++) service.done.add(`e${i}`);
    service.setUpdated(WALL0 + 3_500);
    await clock.advance(1);
    expect(await Promise.all(settled)).toEqual(Array(50).fill('listing'));
    expect(service.reads).toEqual([{ at: 4000, searches: ['astra'], urgent: false }]);
  });

  it('a read teaches the model as a poll would: done between the read that did not show it and the one that did', async () => {
    const clock = new ManualClock();
    const service = fakeService(clock);
    const model = learned('k', 20_000); // probes polled only once 20 s of writes had gone out
    const confirmer = new BatchConfirmer({ read: service.read, model, clock, minGapMs: 1000 });
    const first = confirmer.settle('k', confirm, step('first'), { acceptedAt: 0, acceptedWall: WALL0, timeoutMs: 60_000 }).done;
    const later = Array.from(
      { length: 20 },
      (_, i) => confirmer.settle('k', confirm, step(`e${i}`), { acceptedAt: 19_000, acceptedWall: WALL0 + 19_000, timeoutMs: 60_000 }).done,
    );
    service.done.add('first');
    service.setUpdated(WALL0 + 19_500);
    await clock.advance(20_000); // the first read: "first" done, the others not yet (1 s after acceptance)
    expect(await first).toBe('listing');
    for (let i = 0; i < 20; i++) service.done.add(`e${i}`);
    service.setUpdated(WALL0 + 22_000);
    await clock.advance(19_000); // they are due at 39 s by the probes' 20 s; read then
    expect(await Promise.all(later)).toEqual(Array(20).fill('listing'));
    // Each was seen not done 1 s and done 20 s after acceptance: the model records the middle, 10.5 s.
    expect(model.predict('k')).toBe(10_500);
  });

  it('a listing last updated before the operation was accepted settles nothing about it: it is polled', async () => {
    const clock = new ManualClock();
    const service = fakeService(clock);
    const confirmer = new BatchConfirmer({ read: service.read, model: learned('k', 1000), clock });
    service.done.add('e1'); // shown done, but by a listing older than the operation
    service.setUpdated(WALL0 - 1);
    const one = confirmer.settle('k', confirm, step('e1'), { acceptedAt: 0, acceptedWall: WALL0, timeoutMs: 60_000 }).done;
    await clock.advance(1000);
    expect(await one).toBe('poll');
  });

  it('an operation not shown done after its predicted moment is polled (a failure is only in its answer); a later one waits for the next read', async () => {
    const clock = new ManualClock();
    const service = fakeService(clock);
    const confirmer = new BatchConfirmer({ read: service.read, model: learned('k', 2000), clock, minGapMs: 500 });
    const early = confirmer.settle('k', confirm, step('early'), { acceptedAt: 0, acceptedWall: WALL0, timeoutMs: 60_000 }).done;
    await clock.advance(1500);
    const late = confirmer.settle('k', confirm, step('late'), { acceptedAt: 1500, acceptedWall: WALL0 + 1500, timeoutMs: 60_000 }).done;
    service.setUpdated(WALL0 + 1800);
    await clock.advance(500); // t = 2000: the first read; "early" is not shown
    expect(await early).toBe('poll');
    service.done.add('late');
    service.setUpdated(WALL0 + 3400);
    await clock.advance(1500); // t = 3500: "late" is due
    expect(await late).toBe('listing');
    expect(service.reads.map((r) => r.at)).toEqual([2000, 3500]);
  });

  it('while a kind is unlearned its first operations are probes for the Watcher; the rest wait for a prediction', async () => {
    const clock = new ManualClock();
    const service = fakeService(clock);
    const model = new DurationModel();
    const confirmer = new BatchConfirmer({ read: service.read, model, clock, probes: 2, recheckMs: 1000 });
    const all = ['a', 'b', 'c', 'd'].map((id) => confirmer.settle('k', confirm, step(id), { acceptedAt: 0, acceptedWall: WALL0, timeoutMs: 60_000 }).done);
    expect(await all[0]).toBe('poll');
    expect(await all[1]).toBe('poll');
    await clock.advance(500);
    model.record('k', 0, 1200); // the probes taught it
    model.record('k', 0, 1300);
    service.done.add('c').add('d');
    service.setUpdated(WALL0 + 1250);
    await clock.advance(1000);
    expect(await Promise.all(all.slice(2))).toEqual(['listing', 'listing']);
    expect(service.reads).toHaveLength(1);
  });

  it('probes that teach nothing (they failed): more operations go to the Watcher each look, 1, 2, 4…', async () => {
    const clock = new ManualClock();
    const service = fakeService(clock);
    const confirmer = new BatchConfirmer({ read: service.read, model: new DurationModel(), clock, probes: 1, recheckMs: 1000 });
    const ended: string[] = [];
    for (const id of ['a', 'b', 'c', 'd', 'e', 'f', 'g', 'h'])
      void confirmer
        .settle('k', confirm, step(id), { acceptedAt: 0, acceptedWall: WALL0, timeoutMs: 60_000 })
        .done.then((how) => ended.push(`${id} ${how} ${clock.now()}`));
    await clock.advance(5_000);
    expect(ended).toEqual(['a poll 0', 'b poll 1000', 'c poll 2000', 'd poll 2000', 'e poll 3000', 'f poll 3000', 'g poll 3000', 'h poll 3000']);
    expect(service.reads).toHaveLength(0);
  });

  it('something waiting makes the read urgent; a stopped run hands every operation to the Watcher', async () => {
    const clock = new ManualClock();
    const service = fakeService(clock);
    const stop = new AbortController();
    const confirmer = new BatchConfirmer({ read: service.read, model: learned('k', 1000), clock, signal: stop.signal });
    const urgent = confirmer.settle('k', confirm, step('u'), { acceptedAt: 0, acceptedWall: WALL0, timeoutMs: 60_000 });
    urgent.expedite();
    service.done.add('u');
    service.setUpdated(WALL0 + 900);
    await clock.advance(1000);
    expect(await urgent.done).toBe('listing');
    expect(service.reads[0]!.urgent).toBe(true);
    const left = confirmer.settle('k', confirm, step('x'), { acceptedAt: 1000, acceptedWall: WALL0 + 1000, timeoutMs: 60_000 }).done;
    stop.abort();
    expect(await left).toBe('poll');
  });
});

describe('readListing', () => {
  it('a listing that cannot be read is said in a log line (the operations are polled instead), never dropped in silence', async () => {
    const lines: { msg: string; err?: string }[] = [];
    const logger = pino({ level: 'debug' }, new Writable({ write: (chunk: Buffer, _e, done) => (lines.push(JSON.parse(String(chunk))), done()) }));
    const caller = { read: () => Promise.reject(new ServerError(503, 'GET', '/company/c/wp-themes', 'down')) } as unknown as CallPort;
    expect(await readListing({ caller, company: 'c', logger }, ['astra'], PRIORITY.poll)).toBeUndefined();
    expect(lines).toEqual([
      expect.objectContaining({ msg: expect.stringContaining('could not read the listing'), err: 'GET /company/c/wp-themes answered 503: down' }),
    ]);
  });
});
