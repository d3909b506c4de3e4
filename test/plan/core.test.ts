import { describe, expect, it } from 'vitest';
import { ACTIONS } from '../../src/actions/index.js';
import { exposureOf } from '../../src/inventory/exposure.js';
import { FirstSeen } from '../../src/inventory/first-seen.js';
import { versionItem, type Environment, type Inventory } from '../../src/inventory/inventory.js';
import { readKind, type InventoryReader } from '../../src/inventory/read.js';
import { buildPlan } from '../../src/plan/plan.js';
import { parsePlaybook } from '../../src/playbook/load.js';
import { StagingTable } from '../../src/inventory/staging-table.js';

const COMPANY = '0f1e2d3c-4b5a-4697-8877-665544332211';
const NOW = Date.parse('2026-11-20T02:00:00.000Z');
const DAY = 86_400_000;
const id = (n: number) => `00000000-0000-4000-8000-${String(n).padStart(12, '0')}`;

/** The site listing's environments: three sites on 6.5.5, 6.7.1 and 7.0.0, one whose version the listing leaves out. */
const SITES = [
  { id: id(1), display_name: 'live', site: 'a', wordpress_version: '6.5.5' },
  { id: id(2), display_name: 'live', site: 'b', wordpress_version: '6.7.1' },
  { id: id(3), display_name: 'live', site: 'c', wordpress_version: '7.0.0' },
  { id: id(4), display_name: 'live', site: 'd', wordpress_version: null },
  // The service's text never reaches a command: a version that is not numbered is shown, never offered.
  { id: id(5), display_name: 'live', site: 'e', wordpress_version: '6.8; rm -rf /' },
];

async function inventory(): Promise<Inventory> {
  const reader = { listSiteEnvironments: () => Promise.resolve(SITES) } as unknown as InventoryReader;
  const inv: Inventory = { company: COMPANY, environments: [], listed: {} };
  await readKind(reader, inv, 'core');
  return inv;
}

function plan(inv: Inventory, withBlock: string, releases = false) {
  const playbook = parsePlaybook(
    `version: 1\nname: t\ncompany: ${COMPANY}\ntasks:\n  - name: wp\n    action: core.update\n    target: all\n    with: ${withBlock}\n`,
    'pb.yaml',
    { env: {} },
  );
  const firstSeen = FirstSeen.of([
    { core: 'wordpress', version: '6.7.1', at: NOW - 10 * DAY },
    { core: 'wordpress', version: '7.0.0', at: NOW - DAY },
  ]);
  return buildPlan({ playbook, inventory: inv, date: '2026-11-20', ...(releases ? { releases: { now: NOW, firstSeen } } : {}) });
}

const commands = (p: ReturnType<typeof plan>) => p.steps.map((s) => [s.target.site, (s.body as { wp_command: string }).wp_command]);

describe('WordPress core, the third kind of item', () => {
  it('reads each environment’s version from the site listing; offered every newer numbered version the fleet runs', async () => {
    const inv = await inventory();
    expect(inv.environments.map((e) => [e.site, e.items.core?.[0]?.version, e.items.core?.[0]?.offers])).toEqual([
      ['a', '6.5.5', ['7.0.0', '6.7.1']],
      ['b', '6.7.1', ['7.0.0']],
      ['c', '7.0.0', []],
      ['e', '6.8; rm -rf /', []],
    ]);
    expect(inv.listed.core).toEqual({ count: 1 });
  });

  it('one WP-CLI command an environment, naming the version judged; max_bump: minor takes the newest minor instead of leaving it alone', async () => {
    const inv = await inventory();
    expect(commands(plan(inv, '{ max_bump: major }'))).toEqual([
      ['a', 'wp core update --version=7.0.0'],
      ['b', 'wp core update --version=7.0.0'],
    ]);
    const minor = plan(inv, '{ max_bump: minor }');
    expect(commands(minor)).toEqual([['a', 'wp core update --version=6.7.1']]);
    expect(minor.skipped.find((s) => s.target.site === 'b')!.reason).toBe('left alone: wordpress: major update 6.7.1 → 7.0.0 beyond max_bump: minor');
    expect(minor.steps[0]).toMatchObject({ endpoint: 'runWpCliCommand', precondition: 'wordpress 6.5.5 → 6.7.1' });
  });

  it('versions: an allow-list, and a version the fleet does not run yet is offered when the task names it', async () => {
    const inv = await inventory();
    expect(commands(plan(inv, '{ versions: ["6.7.1"] }'))).toEqual([['a', 'wp core update --version=6.7.1']]);
    expect(commands(plan(inv, '{ versions: ["7.0.1"] }'))).toEqual([
      ['a', 'wp core update --version=7.0.1'],
      ['b', 'wp core update --version=7.0.1'],
      ['c', 'wp core update --version=7.0.1'],
    ]);
    const refused = () => plan(inv, '{ versions: ["7.0; curl x"] }');
    expect(refused).toThrow(/tasks\.0\.with\.versions\.0/);
  });

  it('release age is kept for core apart: 7.0.0 is one day old, so a 3d age holds it and names the core item', async () => {
    const inv = await inventory();
    const aged = plan(inv, '{ min_release_age: 3d }', true);
    expect(commands(aged)).toEqual([]);
    const held = aged.skipped.find((s) => s.target.site === 'b')!;
    expect(held.release_age).toEqual([expect.objectContaining({ core: 'wordpress', code: 'age_pending', version: '7.0.0' })]);
  });

  it('a step is read back from the site listing: the command succeeding while the version did not move fails it', async () => {
    const inv = await inventory();
    const action = ACTIONS.get('core.update')!;
    const step = { target: { env_id: id(2) }, body: { wp_command: 'wp core update --version=7.0.0' } };
    expect(action.readBack!(step, inv)).toEqual({
      runs: [{ name: 'wordpress', version: '6.7.1' }],
      differs: 'the environment runs wordpress 6.7.1, not 7.0.0 as judged',
    });
    const moved: Environment = { ...inv.environments[1]!, items: { core: [versionItem('core', 'wordpress', '7.0.0', [])] } };
    expect(action.readBack!(step, { ...inv, environments: [moved] })).toEqual({ runs: [{ name: 'wordpress', version: '7.0.0' }] });
  });

  it('exposure: an environment behind the newest by more than a minor release (in WordPress’s words: another x.y), not one a minor behind', async () => {
    const exposure = exposureOf(await inventory());
    expect(exposure.items).toEqual([
      {
        core: 'wordpress',
        environments: [expect.objectContaining({ site: 'a', version: '6.5.5', update: '7.0.0' }), expect.objectContaining({ site: 'b', version: '6.7.1' })],
      },
    ]);
    const minorBehind: Inventory = {
      company: COMPANY,
      listed: {},
      environments: [{ id: id(9), site: 'x', name: 'live', items: { core: [versionItem('core', 'wordpress', '7.0.0', ['7.0.1'])] } }],
    };
    expect(exposureOf(minorBehind).items).toEqual([]);
  });

  it('staging first: WordPress goes to the site’s staging environment first, pinned, the decision naming core', async () => {
    const reader = {
      listSiteEnvironments: () =>
        Promise.resolve([
          { id: id(1), display_name: 'live', site: 'a', wordpress_version: '6.7.1' },
          { id: id(2), display_name: 'staging', site: 'a', wordpress_version: '6.7.1' },
          { id: id(3), display_name: 'live', site: 'b', wordpress_version: '6.7.2' },
        ]),
    } as unknown as InventoryReader;
    const inv: Inventory = { company: COMPANY, environments: [], listed: {} };
    await readKind(reader, inv, 'core');
    const playbook = parsePlaybook(
      `version: 1\nname: t\ncompany: ${COMPANY}\ntasks:\n  - name: wp\n    action: core.update\n    target: all\n    rollout: { staging_first: true }\n`,
      'pb.yaml',
      { env: {} },
    );
    const staged = buildPlan({ playbook, inventory: inv, date: '2026-11-20', staging: { now: NOW, table: StagingTable.of([]) } });
    expect(staged.steps.map((s) => [s.target.environment, s.role, (s.body as { wp_command: string }).wp_command])).toEqual([
      ['staging', 'staging', 'wp core update --version=6.7.2'],
    ]);
    expect(staged.steps[0]!.staging).toEqual([expect.objectContaining({ code: 'staged', core: 'wordpress', version: '6.7.2' })]);
    expect(staged.skipped.find((s) => s.target.env_id === id(1))!.staging).toEqual([expect.objectContaining({ code: 'staged', core: 'wordpress' })]);
  });
});
