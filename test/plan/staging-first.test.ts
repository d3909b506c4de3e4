import { describe, expect, it } from 'vitest';
import { installedItem } from '../helpers/items.js';
import type { Environment, InstalledItem } from '../../src/inventory/inventory.js';
import { StagingTable, type StagingEntry } from '../../src/inventory/staging-table.js';
import { judgeStaged, supersededSoak, type Soaked } from '../../src/plan/staging-first.js';

const HOUR = 3_600_000;
const NOW = Date.parse('2026-03-03T02:00:00.000Z');

const theme = (version: string, update?: string): InstalledItem => installedItem('theme', 'calm', version, update);

const env = (id: string, name: string, t: InstalledItem): Environment => ({ id, site: 'acme', name, items: { theme: [t] } });
const live = env('L', 'live', theme('1.0.0', '1.0.1'));
const entry = (kind: StagingEntry['kind'], at: number, version = '1.0.1'): StagingEntry => ({ env_id: 'S', theme: 'calm', version, kind, at });

function judge(staging: Environment | undefined, entries: StagingEntry[], soak = '20h') {
  return judgeStaged({ live, staging }, live.items.theme!, { staging_first: true, soak }, { now: NOW, table: StagingTable.of(entries) });
}

describe('staging first, judged', () => {
  it('keeps the earliest time of each kind, whatever order the lines came in', () => {
    const table = StagingTable.of([entry('healthy', 5), entry('healthy', 3), entry('failed', 9), entry('failed', 7)]);
    expect(table.get('S', { kind: 'theme', name: 'calm' }, '1.0.1')).toEqual({ healthy: 3, failed: { at: 7, why: 'its staging update failed' } });
    expect(table.get('S', { kind: 'theme', name: 'calm' }, '1.0.2')).toBeUndefined();
  });

  it('stages where staging is offered the same version, soaks, then promotes; a failure holds for good', () => {
    expect(judge(env('S', 'staging', theme('1.0.0', '1.0.1')), []).decisions[0]).toMatchObject({ code: 'staged' });
    expect(judge(env('S', 'staging', theme('1.0.1')), [entry('healthy', NOW - 19 * HOUR)]).decisions[0]).toMatchObject({
      code: 'staging_soaking',
      until: new Date(NOW + HOUR).toISOString(),
    });
    const promoted = judge(env('S', 'staging', theme('1.0.1')), [entry('healthy', NOW - 20 * HOUR)]);
    expect(promoted.decisions[0]).toMatchObject({ code: 'promoted' });
    expect(promoted.promote.map((t) => t.name)).toEqual(['calm']);
    const failed = judge(env('S', 'staging', theme('1.0.1')), [entry('healthy', NOW - 48 * HOUR), entry('failed', NOW - 30 * HOUR)]);
    expect(failed.decisions[0]).toMatchObject({ code: 'staging_failed' });
    expect(failed.promote).toEqual([]);
  });

  it('a version on staging no staging update checked is never promoted; staging on another version cannot stage it; no staging holds', () => {
    const unchecked = judge(env('S', 'staging', theme('1.0.1')), []);
    expect(unchecked.decisions[0]).toMatchObject({ code: 'staging_unchecked' });
    expect(unchecked.promote).toEqual([]);
    expect(judge(env('S', 'staging', theme('0.9.0', '0.9.5')), []).decisions[0]).toMatchObject({
      code: 'staging_mismatch',
      why: expect.stringContaining('cannot be staged') as unknown,
    });
    // no_staging: live is for a site without staging, never for one whose staging cannot take it.
    const mismatched = judgeStaged(
      { live, staging: env('S', 'staging', theme('1.1.0')) },
      live.items.theme!,
      { staging_first: true, no_staging: 'live' },
      { now: NOW, table: StagingTable.of([]) },
    );
    expect(mismatched.decisions[0]).toMatchObject({ code: 'staging_mismatch' });
    expect(mismatched.promote).toEqual([]);
    const alone = judge(undefined, []);
    expect(alone.decisions[0]).toMatchObject({ code: 'no_staging', override: 'rollout.no_staging: live updates such sites directly' });
    expect(alone.promote).toEqual([]);
  });
  it('live behind a version staging soaked takes that version, not the newest, and staging stages the newest the same night', () => {
    const newer = { ...live, themes: [theme('1.0.0', '1.0.2')] };
    const staging = env('S', 'staging', theme('1.0.1', '1.0.2'));
    const table = StagingTable.of([entry('healthy', NOW - 30 * HOUR)]);
    const judged = judgeStaged({ live: newer, staging }, newer.themes, { staging_first: true, soak: '20h' }, { now: NOW, table });
    expect(judged.decisions.map((d) => [d.code, d.version])).toEqual([
      ['promoted', '1.0.1'],
      ['staged', '1.0.2'],
    ]);
    expect(judged.promote.map((t) => t.update_version)).toEqual(['1.0.1']);
    // Still soaking: live waits for 1.0.1, and staging does not move on.
    const soaking = judgeStaged({ live: newer, staging }, newer.themes, { staging_first: true, soak: '40h' }, { now: NOW, table });
    expect(soaking.decisions.map((d) => [d.code, d.version])).toEqual([['staging_soaking', '1.0.1']]);
    expect(soaking.stage).toEqual([]);
  });

  it('the soaked version gives way to the newest where it is flagged vulnerable and the newest is not, or the policy now leaves it alone; never to a newest the policy refuses', () => {
    const offered = theme('1.0.0', '1.0.2');
    const soaked = (vulnerable: boolean): Soaked => ({ version: '1.0.1', since: NOW - 30 * HOUR, vulnerable });
    const sends = { sendsNewest: true };
    expect(supersededSoak(offered, soaked(true), sends)).toBe('is now flagged vulnerable');
    expect(supersededSoak(offered, soaked(false), sends)).toBeUndefined();
    expect(supersededSoak(offered, soaked(false), { sendsNewest: true, refused: 'quarantined' })).toBe("no longer passes the task's policy (quarantined)");
    // The newest flagged too: the policy's word alone (here it takes the soaked one).
    expect(supersededSoak({ ...offered, update_vulnerable: true }, soaked(true), sends)).toBeUndefined();
    expect(supersededSoak(offered, soaked(true), { sendsNewest: false, refused: 'flagged' })).toBeUndefined();
    expect(supersededSoak(offered, undefined, sends)).toBeUndefined();
    expect(supersededSoak(theme('1.0.0', '1.0.1'), soaked(true), sends)).toBeUndefined();

    const newer = { ...live, items: { theme: [offered] } };
    // The listing flags 1.0.1, as staging runs it.
    const staging = env('S', 'staging', installedItem('theme', 'calm', '1.0.1', '1.0.2', { version_vulnerable: true }));
    const table = StagingTable.of([entry('healthy', NOW - 30 * HOUR)]);
    const judged = (rollout: object) =>
      judgeStaged(
        { live: newer, staging },
        [offered],
        { staging_first: true, soak: '20h', ...rollout },
        { now: NOW, table },
        new Map([['calm', 'is now flagged vulnerable']]),
      );
    const held = judged({});
    expect(held.decisions.map((d) => [d.code, d.version, d.soaked])).toEqual([['staged', '1.0.2', '1.0.1']]);
    expect([held.stage.map((t) => t.version), held.promote]).toEqual([['1.0.1'], []]);
    const bypassed = judged({ security_bypass: true });
    // One decision for both: live takes 1.0.2 unstaged, staging takes it too.
    expect(bypassed.decisions.map((d) => [d.code, d.version, d.soaked])).toEqual([['staging_bypassed', '1.0.2', '1.0.1']]);
    expect([bypassed.stage.map((t) => t.update_version), bypassed.promote.map((t) => t.update_version)]).toEqual([['1.0.2'], ['1.0.2']]);
  });
});
