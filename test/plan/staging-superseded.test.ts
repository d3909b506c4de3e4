import { afterEach, describe, expect, it, vi } from 'vitest';
import type { Environment, Inventory } from '../../src/inventory/inventory.js';
import { QuarantineTable } from '../../src/inventory/quarantine-table.js';
import { RetryTable } from '../../src/inventory/retry-table.js';
import { StagingTable, type StagingEntry } from '../../src/inventory/staging-table.js';
import { backoffOf, type Withholding } from '../../src/inventory/withheld.js';
import { buildPlan } from '../../src/plan/plan.js';
import { parsePlaybook } from '../../src/playbook/load.js';
import { installedItem } from '../helpers/items.js';

const COMPANY = '0f1e2d3c-4b5a-4697-8877-665544332211';
const NOW = Date.parse('2026-11-20T02:00:00.000Z');
const DAY = 86_400_000;
const id = (n: number) => `00000000-0000-4000-8000-${String(n).padStart(12, '0')}`;
const [LIVE, STAGING] = [id(1), id(2)];

afterEach(() => vi.useRealTimers());

/**
 * One site: live runs akismet 2.5.2, staging 2.5.3 (soaked, two days healthy); both are offered 2.5.4,
 * and the listing flags 2.5.2 and 2.5.3 vulnerable (`flagged: false`: nothing flagged).
 */
function inventory(flagged = true): Inventory {
  const env = (env: string, name: string, version: string): Environment => ({
    id: env,
    site: 'a',
    site_id: 'site-a',
    name,
    items: { plugin: [installedItem('plugin', 'akismet', version, '2.5.4', { version_vulnerable: flagged })] },
  });
  return { company: COMPANY, environments: [env(LIVE, 'live', '2.5.2'), env(STAGING, 'staging', '2.5.3')], listed: { plugin: { count: 1 } } };
}

const soaked: StagingEntry = { env_id: STAGING, plugin: 'akismet', version: '2.5.3', kind: 'healthy', at: NOW - 2 * DAY };

function plan(rollout: string, o: { flagged?: boolean; entries?: StagingEntry[]; withholding?: Withholding } = {}) {
  const playbook = parsePlaybook(
    `version: 1\nname: t\ncompany: ${COMPANY}\ntasks:\n  - name: p\n    action: plugins.update\n    target: { environment: live }\n    rollout: ${rollout}\n`,
    'pb.yaml',
    { env: {} },
  );
  const staging = { now: NOW, table: StagingTable.of(o.entries ?? [soaked]) };
  return buildPlan({ playbook, inventory: inventory(o.flagged), date: '2026-11-20', staging, ...(o.withholding ? { withholding: o.withholding } : {}) });
}

const STAGED = '{ staging_first: true, soak: 20h }';
const BYPASS = '{ staging_first: true, soak: 20h, security_bypass: true }';
const sent = (p: ReturnType<typeof plan>) => p.steps.map((s) => [s.target.environment, s.role ?? 'write', s.body]);

describe('staging first when the version staging soaked is no longer acceptable', () => {
  it('flagged vulnerable: the newer version is staged, live waits for it and is told why and what sends it sooner', () => {
    const p = plan(STAGED);
    expect(sent(p)).toEqual([['staging', 'staging', { name: 'akismet', update_version: '2.5.4' }]]);
    const skip = p.skipped.find((s) => s.target.env_id === LIVE && s.staging)!;
    expect(skip.staging).toEqual([
      {
        plugin: 'akismet',
        code: 'staged',
        version: '2.5.4',
        staging: { env_id: STAGING, environment: 'staging' },
        soaked: '2.5.3',
        why: 'akismet 2.5.3 soaked on staging is now flagged vulnerable',
        override: 'rollout.security_bypass: true sends 2.5.4 to live unstaged',
      },
    ]);
    expect(skip.reason).toBe(
      'staged: akismet 2.5.4 goes to staging first; live follows on a run after the soak (akismet 2.5.3 soaked on staging is now flagged vulnerable; rollout.security_bypass: true sends 2.5.4 to live unstaged)',
    );
    // Nothing flagged: live takes the version staging soaked, pinned, and staging stages the newer one.
    const calm = plan(STAGED, { flagged: false });
    expect(sent(calm)).toEqual([
      ['staging', 'staging', { name: 'akismet', update_version: '2.5.4' }],
      ['live', 'write', { name: 'akismet', update_version: '2.5.3' }],
    ]);
  });

  it('rollout.security_bypass: live takes 2.5.4 unstaged, staging too, the step naming the bypass; live is not also told it waits', () => {
    const p = plan(BYPASS);
    expect(sent(p)).toEqual([
      ['staging', 'staging', { name: 'akismet', update_version: '2.5.4' }],
      ['live', 'write', { name: 'akismet', update_version: '2.5.4' }],
    ]);
    const live = p.steps.find((s) => s.target.env_id === LIVE)!;
    expect(live.staging).toEqual([expect.objectContaining({ code: 'staging_bypassed', version: '2.5.4', soaked: '2.5.3' })]);
    // Staging's step carries the same decision: its end is recorded as any staging step's.
    expect(p.steps.find((s) => s.role === 'staging')!.staging).toEqual(live.staging);
    expect(live.note).toBe('staging_bypassed: akismet 2.5.4 goes to live unstaged: 2.5.3 soaked on staging is flagged vulnerable (rollout.security_bypass)');
    expect(p.skipped.filter((s) => s.target.env_id === LIVE && s.staging)).toEqual([]);
    // The bypass is for a soaked version flagged vulnerable: with nothing flagged, live still takes the soaked one.
    expect(sent(plan(BYPASS, { flagged: false }))).toEqual(sent(plan(STAGED, { flagged: false })));
  });

  it('never bypasses to a version that failed on staging: live keeps its version', () => {
    const failed: StagingEntry = {
      env_id: STAGING,
      plugin: 'akismet',
      version: '2.5.4',
      kind: 'failed',
      at: NOW - DAY,
      why: 'its staging update ended failed',
    };
    const p = plan(BYPASS, { entries: [soaked, failed] });
    expect(sent(p)).toEqual([]);
    expect(p.skipped.find((s) => s.staging)!.staging).toEqual([expect.objectContaining({ code: 'staging_failed', version: '2.5.4', soaked: '2.5.3' })]);
  });

  it("the task's policy leaving the soaked version alone (quarantined) stages the newer one first, with the policy's words; no bypass for that", () => {
    const broke = { plugin: 'akismet', version: '2.5.3', env_id: id(9), site: 'elsewhere', at: NOW - DAY, why: 'PHP Fatal error' };
    const withholding: Withholding = { now: NOW, quarantine: QuarantineTable.of([broke]), retries: RetryTable.of([]), backoff: backoffOf(undefined) };
    for (const rollout of [STAGED, BYPASS]) {
      const p = plan(rollout, { flagged: false, withholding });
      expect(sent(p)).toEqual([['staging', 'staging', { name: 'akismet', update_version: '2.5.4' }]]);
      const d = p.skipped.find((s) => s.staging)!.staging![0]!;
      expect(d).toMatchObject({ code: 'staged', version: '2.5.4', soaked: '2.5.3', override: 'rollout.staging_first: false sends it to live at once' });
      expect(d.why).toMatch(/^akismet 2\.5\.3 soaked on staging no longer passes the task's policy \(left alone: akismet: 2\.5\.3 quarantined: .*\)$/);
    }
  });

  it('stays a pure function: the same inputs give the same plan byte for byte, whatever the clock or randomness, and the inputs are not changed', () => {
    for (const rollout of [STAGED, BYPASS]) {
      const first = JSON.stringify(plan(rollout));
      vi.useFakeTimers({ now: NOW + 400 * DAY });
      vi.spyOn(Math, 'random').mockReturnValue(0.5);
      expect(JSON.stringify(plan(rollout))).toBe(first);
      vi.restoreAllMocks();
      vi.useRealTimers();
    }
    const input = inventory();
    const before = JSON.stringify(input);
    const playbook = parsePlaybook(
      `version: 1\nname: t\ncompany: ${COMPANY}\ntasks:\n  - name: p\n    action: plugins.update\n    target: all\n    rollout: ${BYPASS}\n`,
      'pb.yaml',
      {
        env: {},
      },
    );
    buildPlan({ playbook, inventory: input, date: '2026-11-20', staging: { now: NOW, table: StagingTable.of([soaked]) } });
    expect(JSON.stringify(input)).toBe(before);
  });
});
