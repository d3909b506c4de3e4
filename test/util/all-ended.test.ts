import { describe, expect, it } from 'vitest';
import { allEnded } from '../../src/util/all-ended.js';

describe('allEnded', () => {
  it('gives every value in order', async () => {
    await expect(allEnded([Promise.resolve(1), Promise.resolve(2)])).resolves.toEqual([1, 2]);
  });

  it('says a failure only once the rest has ended: nothing is left running', async () => {
    let finish!: () => void;
    let ended = false;
    const slow = new Promise<string>((resolve) => (finish = () => resolve('done'))).then((v) => ((ended = true), v));
    const failing = Promise.reject(new Error('journal gone'));
    const all = allEnded([failing, slow]);
    let settled = false;
    const watched = all.catch((error: Error) => ((settled = true), error));
    // Every promise job queued so far has run (a turn of the event loop): the failure is in, the slow
    // one still runs, and allEnded has not given up on it (Promise.all would have rejected by now).
    await new Promise((resolve) => setImmediate(resolve));
    expect(settled).toBe(false);
    finish();
    const error = await watched;
    expect(ended).toBe(true);
    expect(error).toBeInstanceOf(Error);
    expect((error as Error).message).toBe('journal gone');
  });
});
