import { describe, expect, it } from 'vitest';
import { runCli, writePlaybook } from '../helpers/cli.js';

const head = 'version: 1\nname: t\ncompany: 0f1e2d3c-4b5a-4697-8877-665544332211\ntasks:\n  - name: x\n    action: themes.update\n    target: all\n    with:\n';
/** A playbook whose `with:` block is `lines`, the first of them on line 9. */
const withLines = (...lines: string[]) => writePlaybook(`${head}${lines.map((l) => `      ${l}\n`).join('')}`);

describe('validate: the release-age fields of themes.update', () => {
  it('accepts ages in days, an age per bump, max_hold and the bypass', async () => {
    const file = withLines('min_release_age: 3d', 'by_bump: { patch: 1d, minor: 1d12h, major: 14d }', 'max_hold: 21d', 'release_age_bypass: none');
    expect(await runCli(['validate', file])).toMatchObject({ code: 0, stderr: '' });
    expect((await runCli(['validate', withLines('by_bump: { major: 14d }')])).code).toBe(0);
  });

  it.each([
    ['an age that is not one', ['min_release_age: 3 days'], '9:24: tasks.0.with.min_release_age: "3 days" is not an age such as 12h, 3d or 1d12h'],
    ['an age past its limit', ['min_release_age: 400d'], '9:24: tasks.0.with.min_release_age: "400d" is longer than 90d, the most it takes'],
    ['an unknown bump', ['min_release_age: 3d', 'by_bump: { huge: 1d }'], '10:24: tasks.0.with.by_bump.huge: is not a known field'],
    [
      'an age the default max_hold would cut short',
      ['min_release_age: 3d', 'by_bump: { major: 30d }'],
      '10:25: tasks.0.with.by_bump.major: by_bump.major (30d) is longer than max_hold (21d, the default): such updates would go at max_hold, before their age; set max_hold to at least 30d',
    ],
    [
      'a max_hold shorter than the age',
      ['min_release_age: 3d', 'max_hold: 2d'],
      '10:17: tasks.0.with.max_hold: min_release_age (3d) is longer than max_hold (2d): such updates would go at max_hold, before their age; set max_hold to at least 3d',
    ],
    ['a max_hold without an age', ['max_hold: 30d'], '9:17: tasks.0.with.max_hold: goes with min_release_age or by_bump: without an age nothing is held back'],
    ['an unknown bypass', ['min_release_age: 3d', 'release_age_bypass: always'], '10:27: tasks.0.with.release_age_bypass: must be one of "vulnerable", "none"'],
  ])('refuses %s: exit 2, one line naming file, line and field', async (_name, lines, problem) => {
    const file = withLines(...lines);
    const result = await runCli(['validate', file]);
    expect(result.code).toBe(2);
    expect(result.stderr).toBe(`${file}:${problem}\n1 problem; nothing was sent\n`);
  });
});
