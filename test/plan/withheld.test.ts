import { describe, expect, it } from 'vitest';
import type { Environment, Inventory } from '../../src/inventory/inventory.js';
import { QuarantineTable, releaseOf } from '../../src/inventory/quarantine-table.js';
import { RetryTable } from '../../src/inventory/retry-table.js';
import { backoffOf, type Withholding } from '../../src/inventory/withheld.js';
import { buildPlan } from '../../src/plan/plan.js';
import { ACTIONS } from '../../src/actions/index.js';
import { parsePlaybook } from '../../src/playbook/load.js';
import { installedItem as item } from '../helpers/items.js';

const COMPANY = '0f1e2d3c-4b5a-4697-8877-665544332211';
const NOW = Date.parse('2026-11-20T02:00:00.000Z');
const DAY = 86_400_000;
const id = (n: number) => `00000000-0000-4000-8000-${String(n).padStart(12, '0')}`;

/** Three live environments: forms 1.0.0 offered 2.0.0 on the first two, 2.1.0 on the third; the theme `forms` too. */
function inventory(): Inventory {
  const env = (n: number, to: string): Environment => ({
    id: id(n),
    site: `site${n}`,
    name: 'live',
    items: { theme: [item('theme', 'forms', '1.0.0', '2.0.0')], plugin: [item('plugin', 'forms', '1.0.0', to), item('plugin', 'seo', '3.0.0', '3.0.1')] },
  });
  return { company: COMPANY, environments: [env(1, '2.0.0'), env(2, '2.0.0'), env(3, '2.1.0')], listed: { theme: { count: 1 }, plugin: { count: 2 } } };
}

const broke = { plugin: 'forms', version: '2.0.0', env_id: id(9), site: 'elsewhere', at: NOW - DAY, why: 'PHP Fatal error: in wp-content/plugins/forms/x.php' };

function plan(withholding: Withholding | undefined, w = '{ max_bump: major }') {
  const playbook = parsePlaybook(
    `version: 1\nname: t\ncompany: ${COMPANY}\ntasks:\n  - name: p\n    action: plugins.update\n    target: all\n    with: ${w}\n`,
    'pb.yaml',
    { env: {} },
  );
  return buildPlan({ playbook, inventory: inventory(), date: '2026-11-20', ...(withholding ? { withholding } : {}) });
}
const withholding = (over: Partial<Withholding> = {}): Withholding => ({
  now: NOW,
  quarantine: QuarantineTable.of([]),
  retries: RetryTable.of([]),
  backoff: backoffOf(undefined),
  ...over,
});

describe('what the company’s history withholds', () => {
  it('a quarantined version is left alone on every environment, with when, where, why and the override; a newer one goes', () => {
    const p = plan(withholding({ quarantine: QuarantineTable.of([broke]) }));
    const sent = p.steps.map((s) => [s.target.site, s.body]);
    expect(sent).toEqual([
      ['site1', { name: 'seo', update_version: '3.0.1' }],
      ['site2', { name: 'seo', update_version: '3.0.1' }],
      ['site3', { name: 'forms', update_version: '2.1.0' }],
      ['site3', { name: 'seo', update_version: '3.0.1' }],
    ]);
    const first = p.steps[0]!;
    expect(first.withheld).toEqual([
      {
        plugin: 'forms',
        code: 'quarantined',
        installed: '1.0.0',
        version: '2.0.0',
        since: new Date(NOW - DAY).toISOString(),
        env_id: id(9),
        site: 'elsewhere',
        broken_environments: 1,
        why: broke.why,
        override: 'sitefleet quarantine release forms@2.0.0 --kind plugin',
      },
    ]);
    expect(first.note).toContain('left alone: forms: 2.0.0 quarantined');
    expect(p.steps[2]!.withheld).toBeUndefined();
  });

  it('released, or not given any history, the plan is as before', () => {
    const released = plan(withholding({ quarantine: QuarantineTable.of([broke, releaseOf('plugin', 'forms', '2.0.0', NOW)]) }));
    expect(released).toEqual(plan(undefined));
    expect(plan(withholding())).toEqual(plan(undefined));
  });

  it('a failure that may pass holds the update on its environment alone until its backoff ends; the whole environment skipped says so', () => {
    const failure = { plugin: 'forms', version: '2.0.0', env_id: id(1), run: 'r1', at: NOW - DAY / 2, why: 'HTTP 503; the service is busy' };
    const held = plan(withholding({ retries: RetryTable.of([failure]) }), '{ plugins: [forms], max_bump: major }');
    expect(held.steps.map((s) => s.target.site)).toEqual(['site2', 'site3']);
    expect(held.skipped).toEqual([
      expect.objectContaining({
        target: expect.objectContaining({ env_id: id(1) }),
        withheld: [
          expect.objectContaining({
            code: 'retry_later',
            failures: 1,
            retry_at: new Date(NOW + DAY / 2).toISOString(),
            override: 'sitefleet retry clear forms@2.0.0 --kind plugin',
          }),
        ],
      }),
    ]);
    expect(held.skipped[0]!.reason).toMatch(/^left alone: forms: update 1.0.0 → 2.0.0 failed once here .*: retry_later, not before 2026-11-20T14:00:00.000Z/);
    // One reason in the summary's counts, however the service's words are punctuated.
    expect(ACTIONS.get('plugins.update')!.reasonParts!(held.skipped[0]!.reason)).toHaveLength(1);
    // Its day passed: sent again.
    const later = plan(withholding({ now: NOW + DAY, retries: RetryTable.of([failure]) }), '{ plugins: [forms], max_bump: major }');
    expect(later.steps.map((s) => s.target.site)).toEqual(['site1', 'site2', 'site3']);
  });
});
