import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import type { ItemChange } from '../../src/actions/action.js';
import { nextRound, restoreBound, restoresUsed, startIsolation } from '../../src/run/life/isolation.js';
import type { Isolation } from '../../src/run/types.js';

const updates = (n: number): ItemChange[] => Array.from({ length: n }, (_, i) => ({ plugin: `p${i}`, from: '1.0', to: '1.1' }));

/**
 * Plays isolation against a site that breaks whenever a culprit is installed: a round is broken when
 * it sends a culprit (what is installed holds none, since a broken round is restored). Returns the
 * record as it ended, and what the site runs.
 */
function play(n: number, culprits: Set<string>, suspect?: string): { iso: Isolation; installed: Set<string>; rounds: number } {
  let iso = startIsolation(updates(n), suspect ? { plugin: suspect } : undefined);
  const installed = new Set<string>();
  for (let rounds = 0; rounds < 4 * n + 4; rounds++) {
    const next = nextRound(iso);
    if ('end' in next) {
      // The record's count is the rounds' own: this play's tally of broken rounds must agree.
      expect(restoresUsed(iso)).toBe(iso.restores);
      return { iso: { ...iso, ...next.end }, installed, rounds };
    }
    const broken = next.send.some((name) => culprits.has(name));
    if (!broken) for (const name of next.send) installed.add(name);
    iso = {
      ...iso,
      restores: iso.restores + (broken ? 1 : 0),
      rounds: [
        ...iso.rounds,
        broken
          ? { names: next.send, status: 'broken', restored: { backup_id: 1, operation_id: 'op', status: 'succeeded', health: { outcome: 'healthy' } } }
          : { names: next.send, status: 'healthy' },
      ],
    };
  }
  throw new Error(`isolation did not end: ${JSON.stringify(iso.rounds)}`);
}

describe('isolation rounds', () => {
  it('restoreBound is 1 + ⌈log2 n⌉', () => {
    expect([1, 2, 3, 4, 5, 12, 30].map(restoreBound)).toEqual([1, 2, 3, 3, 4, 5, 6]);
  });

  it('one update: the write itself was the culprit alone, no round', () => {
    const { iso, rounds } = play(1, new Set(['p0']));
    expect(iso.outcome).toBe('found');
    expect(iso.culprits.map((c) => 'plugin' in c && c.plugin)).toEqual(['p0']);
    expect(rounds).toBe(0);
    expect(iso.restores).toBe(1);
  });

  it('the logged suspect, when right, is found with one restore more and every other update goes in one round', () => {
    const { iso, installed } = play(12, new Set(['p7']), 'p7');
    expect(iso.rounds.map((r) => [r.names.length, r.status])).toEqual([
      [1, 'broken'],
      [11, 'healthy'],
    ]);
    expect(iso.restores).toBe(2);
    expect(installed.size).toBe(11);
  });

  it('a wrong suspect costs a round, never a restore beyond the bound', () => {
    const { iso, installed } = play(12, new Set(['p3']), 'p9');
    expect(iso.outcome).toBe('found');
    expect(iso.restores).toBeLessThanOrEqual(restoreBound(12));
    expect([...installed].sort()).toEqual(
      updates(12)
        .map((u) => ('plugin' in u ? u.plugin : ''))
        .filter((p) => p !== 'p3')
        .sort(),
    );
  });

  it('a breakage that does not come back: every update goes in, none is blamed', () => {
    const { iso, installed } = play(4, new Set());
    expect(iso.outcome).toBe('not reproduced');
    expect(iso.culprits).toEqual([]);
    expect(installed.size).toBe(4);
  });

  it('any n, any culprit, any suspect: the culprit alone is out, every other update in, within 1 + ⌈log2 n⌉ restores', () => {
    fc.assert(
      fc.property(
        fc
          .integer({ min: 1, max: 40 })
          .chain((n) => fc.record({ n: fc.constant(n), culprit: fc.integer({ min: 0, max: n - 1 }), suspect: fc.option(fc.integer({ min: 0, max: n - 1 })) })),
        ({ n, culprit, suspect }) => {
          const { iso, installed } = play(n, new Set([`p${culprit}`]), suspect === null ? undefined : `p${suspect}`);
          expect(iso.outcome).toBe('found');
          expect(iso.culprits).toEqual([{ plugin: `p${culprit}`, from: '1.0', to: '1.1' }]);
          expect(installed.size).toBe(n - 1);
          expect(installed.has(`p${culprit}`)).toBe(false);
          expect(iso.restores).toBeLessThanOrEqual(restoreBound(n));
          // The culprit was seen breaking the site alone (the write itself when it carried one update).
          if (n > 1) expect(iso.rounds.some((r) => r.status === 'broken' && r.names.join() === `p${culprit}`)).toBe(true);
        },
      ),
      { numRuns: 300 },
    );
  });

  it('several culprits: each one found is guilty, none is installed, and what is not in is listed as left', () => {
    fc.assert(
      fc.property(fc.integer({ min: 2, max: 30 }), fc.uniqueArray(fc.nat(29), { minLength: 2, maxLength: 4 }), (n, picks) => {
        const guilty = new Set(picks.map((p) => `p${p % n}`));
        const { iso, installed } = play(n, guilty);
        for (const c of iso.culprits) expect(guilty.has('plugin' in c ? c.plugin : '')).toBe(true);
        for (const g of guilty) expect(installed.has(g)).toBe(false);
        const accounted = new Set([
          ...installed,
          ...iso.culprits.map((c) => ('plugin' in c ? c.plugin : '')),
          ...(iso.left ?? []).map((c) => ('plugin' in c ? c.plugin : '')),
        ]);
        expect(accounted.size).toBe(n);
        expect(['found', 'stopped']).toContain(iso.outcome);
      }),
      { numRuns: 200 },
    );
  });

  it('a round whose restore did not put the site back stops isolation: no round goes on a broken site', () => {
    const iso = startIsolation(updates(4));
    const restored = { backup_id: 1, operation_id: 'op', status: 'succeeded' as const, health: { outcome: 'unhealthy' as const, detail: 'HTTP 500' } };
    const next = nextRound({ ...iso, restores: 2, rounds: [{ names: ['p0', 'p1'], status: 'broken', restored }] });
    expect(next).toMatchObject({ end: { outcome: 'stopped', reason: expect.stringContaining('unhealthy (HTTP 500): look at the site') } });
  });

  it('an update seen breaking the site alone is a culprit even when the restore after it did not put the site back', () => {
    const iso = startIsolation(updates(4));
    const restored = { backup_id: 1, operation_id: 'op', status: 'unknown' as const, reason: 'the operation was not seen to end' };
    const next = nextRound({ ...iso, restores: 2, rounds: [{ names: ['p0'], status: 'broken', restored }] });
    expect(next).toMatchObject({ end: { outcome: 'stopped', culprits: [{ plugin: 'p0' }] } });
    const left = 'end' in next ? (next.end.left ?? []).map((c) => ('plugin' in c ? c.plugin : '')) : [];
    expect(left.sort()).toEqual(['p1', 'p2', 'p3']);
  });

  describe('a by-items round its files could not heal goes back to the restore point taken before the write', () => {
    const undone = { status: 'failed' as const, reason: 'a command failed', commands: [] };
    const round = (status: 'succeeded' | 'unknown' | 'failed') => ({
      names: ['p2', 'p3'],
      status: 'broken' as const,
      by_items: true as const,
      undone,
      restored: { backup_id: 1, operation_id: 'op', status, health: status === 'succeeded' ? { outcome: 'healthy' as const } : undefined },
    });
    const ended = (status: 'succeeded' | 'unknown' | 'failed') => {
      const next = nextRound({ ...startIsolation(updates(4)), restores: 1, rounds: [{ names: ['p0', 'p1'], status: 'healthy' }, round(status)] });
      if (!('end' in next)) throw new Error(`isolation went on: ${JSON.stringify(next)}`);
      return { ...next.end, left: (next.end.left ?? []).map((c) => ('plugin' in c ? c.plugin : '')).sort() };
    };

    it('restored and healthy: isolation stops, and the updates of earlier rounds are not counted in (that restore undid them)', () => {
      expect(ended('succeeded')).toMatchObject({ outcome: 'stopped', left: ['p0', 'p1', 'p2', 'p3'], reason: expect.stringContaining('undid every update') });
    });

    it('its restore not known to have ended: none of the write is counted in, and the reason says so', () => {
      const end = ended('unknown');
      expect(end).toMatchObject({ outcome: 'stopped', left: ['p0', 'p1', 'p2', 'p3'] });
      expect(end.reason).toMatch(/ended unknown, so every update of the write may be undone: look at the site$/);
    });

    it('its restore refused (nothing restored): the updates of earlier rounds stay in', () => {
      expect(ended('failed')).toMatchObject({ outcome: 'stopped', left: ['p2', 'p3'], reason: expect.stringContaining('restore ended failed') });
    });
  });

  it('a round that could not be judged stops isolation, listing what is not in', () => {
    const iso = startIsolation(updates(4));
    const next = nextRound({ ...iso, rounds: [{ names: ['p0', 'p1'], status: 'failed', reason: 'operation failed: 500' }] });
    expect(next).toMatchObject({ end: { outcome: 'stopped', reason: expect.stringContaining('operation failed') } });
    expect('end' in next && next.end.left?.length).toBe(4);
  });
});
