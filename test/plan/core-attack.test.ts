import { describe, expect, it } from 'vitest';
import { exposureOf } from '../../src/inventory/exposure.js';
import type { Inventory } from '../../src/inventory/inventory.js';
import { readKind, type InventoryReader } from '../../src/inventory/read.js';
import { FirstSeen } from '../../src/inventory/first-seen.js';
import { buildPlan } from '../../src/plan/plan.js';
import { readBackValidator } from '../../src/util/json-input.js';
import { parsePlaybook } from '../../src/playbook/load.js';

const COMPANY = '0f1e2d3c-4b5a-4697-8877-665544332211';
const id = (n: number) => `00000000-0000-4000-8000-${String(n).padStart(12, '0')}`;

async function inventory(sites: unknown[]): Promise<Inventory> {
  const reader = { listSiteEnvironments: () => Promise.resolve(sites) } as unknown as InventoryReader;
  const inv: Inventory = { company: COMPANY, environments: [], listed: {} };
  await readKind(reader, inv, 'core');
  return inv;
}

function plan(inv: Inventory) {
  const playbook = parsePlaybook(
    `version: 1\nname: t\ncompany: ${COMPANY}\ntasks:\n  - name: wp\n    action: core.update\n    target: all\n    with: { max_bump: major }\n`,
    'pb.yaml',
    { env: {} },
  );
  return buildPlan({ playbook, inventory: inv, date: '2026-11-20' });
}

describe('WordPress versions from the site listing, as text that reaches a command', () => {
  it('a version the listing pads with whitespace (a newline) never reaches the WP-CLI command', async () => {
    const inv = await inventory([
      { id: id(1), display_name: 'live', site: 'a', wordpress_version: '6.5.5' },
      { id: id(2), display_name: 'live', site: 'b', wordpress_version: '7.0.0\n' },
      { id: id(3), display_name: 'live', site: 'c', wordpress_version: ' 7.0.0' },
    ]);
    const commands = plan(inv).steps.map((s) => (s.body as { wp_command: string }).wp_command);
    expect(commands).toEqual(['wp core update --version=7.0.0']);
  });
});

describe('WordPress where the site listing shows no version: not checked, never "none"', () => {
  const themed = (n: number) => ({ id: id(n), site: `s${n}`, name: 'live', items: { theme: [] } });

  it('a site listing that shows no version for any environment leaves core unchecked (exposure --fail-on fails on it)', async () => {
    const reader = {
      listSiteEnvironments: () =>
        Promise.resolve([
          { id: id(1), display_name: 'live', site: 's1', wordpress_version: null },
          { id: id(2), display_name: 'live', site: 's2' },
        ]),
    } as unknown as InventoryReader;
    const inv: Inventory = { company: COMPANY, environments: [themed(1), themed(2)], listed: {} };
    await readKind(reader, inv, 'core');
    expect(inv.listed.core?.unavailable).toMatch(/no WordPress version for any of its 2 environments/);
    expect(exposureOf(inv).unchecked).toEqual([{ kind: 'core', why: inv.listed.core!.unavailable }]);
  });

  it('an environment whose version the listing leaves out is skipped saying so, not "no core update available"', async () => {
    const reader = {
      listSiteEnvironments: () =>
        Promise.resolve([
          { id: id(1), display_name: 'live', site: 's1', wordpress_version: '6.5.5' },
          { id: id(2), display_name: 'live', site: 's2', wordpress_version: '7.0.0' },
          { id: id(3), display_name: 'live', site: 's3', wordpress_version: null },
        ]),
    } as unknown as InventoryReader;
    const inv: Inventory = { company: COMPANY, environments: [themed(1), themed(2), themed(3)], listed: {} };
    await readKind(reader, inv, 'core');
    const p = plan(inv);
    expect(p.steps.map((s) => s.target.env_id)).toEqual([id(1)]);
    expect(p.skipped.find((s) => s.target.env_id === id(3))!.reason).toBe('the site listing shows no WordPress version for this environment: not checked');
  });
});

describe('a plan with WordPress release-age decisions reads back', () => {
  it('a core release_age decision ({core: "wordpress"}) is valid in the plan schema every reader checks (run --plan, resume, report)', async () => {
    const inv = await inventory([
      { id: id(1), display_name: 'live', site: 'a', wordpress_version: '6.5.5' },
      { id: id(2), display_name: 'live', site: 'b', wordpress_version: '7.0.0' },
    ]);
    const playbook = parsePlaybook(
      `version: 1\nname: t\ncompany: ${COMPANY}\ntasks:\n  - name: wp\n    action: core.update\n    target: all\n    with: { min_release_age: 3d }\n`,
      'pb.yaml',
      { env: {} },
    );
    const now = Date.parse('2026-11-20T02:00:00.000Z');
    const firstSeen = FirstSeen.of([{ core: 'wordpress', version: '7.0.0', at: now - 86_400_000 }]);
    const p = buildPlan({ playbook, inventory: inv, date: '2026-11-20', releases: { now, firstSeen } });
    expect(p.skipped.flatMap((s) => s.release_age ?? [])).toEqual([expect.objectContaining({ core: 'wordpress' })]);
    const validate = readBackValidator('plan.schema.json');
    const ok = validate(JSON.parse(JSON.stringify(p)));
    expect(ok, JSON.stringify(validate.errors?.slice(0, 3))).toBe(true);
  });
});
