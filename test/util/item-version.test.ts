import { describe, expect, it } from 'vitest';
import { orderVersions, versionJump, versionKey, versionParts, withinBump, type Bump, type Jump } from '../../src/util/item-version.js';

describe('theme version jumps', () => {
  it('reads two or three numeric parts, a missing part as 0, and nothing else', () => {
    expect(versionParts('4.1.2')).toEqual([4, 1, 2]);
    expect(versionParts('6.0')).toEqual([6, 0, 0]);
    expect(versionParts('10.20.300')).toEqual([10, 20, 300]);
    for (const v of ['1.0-beta', 'v2.0', '2', '1.2.3.4', '', '1..2', '1.x', '١.٢']) expect(versionParts(v), v).toBeUndefined();
  });

  it('names the most significant part that moved, numerically (1.9 → 1.10 is minor)', () => {
    const cases: [string, string, Jump][] = [
      ['4.1.0', '4.1.1', 'patch'],
      ['4.1.0', '4.2.0', 'minor'],
      ['4.1.9', '4.2.0', 'minor'],
      ['1.9.3', '2.0.0', 'major'],
      ['1.9', '1.10', 'minor'],
      ['2.0', '2.0.1', 'patch'],
      ['6.0', '6.0.0', 'none'],
      ['3.2.1', '3.1.0', 'minor'],
      ['1.0-beta', '1.0', 'unnumbered'],
      ['1.0', '1.0.1-rc1', 'unnumbered'],
    ];
    for (const [from, to, jump] of cases) expect(versionJump(from, to), `${from} → ${to}`).toBe(jump);
  });

  it('a bound allows the jumps up to itself; an unnumbered version passes only major', () => {
    const allowed = (max: Bump) => (['none', 'patch', 'minor', 'major', 'unnumbered'] as Jump[]).filter((j) => withinBump(j, max));
    expect(allowed('patch')).toEqual(['none', 'patch']);
    expect(allowed('minor')).toEqual(['none', 'patch', 'minor']);
    expect(allowed('major')).toEqual(['none', 'patch', 'minor', 'major', 'unnumbered']);
  });

  it('keys a numbered version by its three parts, anything else as written', () => {
    expect(['6.0', '6.0.0', ' 6.0 ', '06.0'].map(versionKey)).toEqual(['6.0.0', '6.0.0', '6.0.0', '6.0.0']);
    expect(['1.2.3.4', '2.0-rc1', 'trunk', ''].map(versionKey)).toEqual(['1.2.3.4', '2.0-rc1', 'trunk', '']);
  });

  it('orders releases of any number of parts and pre-releases before their release; nothing it cannot read', () => {
    const oldestFirst = ['1.0-dev', '1.0-alpha', '1.0a2', '1.0-beta', '1.0-beta.2', '1.0-rc1', '1.0-RC2', '1.0', '1.0.0.1', '1.0.1', 'v1.2', '1.2.3.1', '1.10'];
    for (let i = 0; i < oldestFirst.length; i++)
      for (let j = 0; j < oldestFirst.length; j++)
        expect(Math.sign(orderVersions(oldestFirst[i]!, oldestFirst[j]!)!), `${oldestFirst[i]} ? ${oldestFirst[j]}`).toBe(Math.sign(i - j));
    expect(orderVersions('6.0', '6.0.0.0')).toBe(0);
    for (const v of ['trunk', '1.0-nightly', '', '1..2', '1.0+build']) expect(orderVersions(v, '1.0'), v).toBeUndefined();
  });
});
