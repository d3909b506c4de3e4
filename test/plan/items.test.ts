import { describe, expect, it } from 'vitest';
import { FirstSeen } from '../../src/inventory/first-seen.js';
import type { Environment, Inventory } from '../../src/inventory/inventory.js';
import { StagingTable } from '../../src/inventory/staging-table.js';
import { buildPlan } from '../../src/plan/plan.js';
import { itemReadsNeeded, kindsNeeded } from '../../src/plan/needs.js';
import { parsePlaybook } from '../../src/playbook/load.js';
import { installedItem } from '../helpers/items.js';

const COMPANY = '0f1e2d3c-4b5a-4697-8877-665544332211';
const NOW = Date.parse('2026-11-20T02:00:00.000Z');
const DAY = 86_400_000;
const id = (n: number) => `00000000-0000-4000-8000-${String(n).padStart(12, '0')}`;

const item = installedItem;

/** Two sites, each live and staging: the same slug `astra` is a theme and a plugin, and ages apart. */
function inventory(): Inventory {
  const env = (n: number, site: string, name: string): Environment => ({
    id: id(n),
    site,
    name,
    items: {
      theme: [item('theme', 'astra', '4.0.0', '4.0.1')],
      plugin: [item('plugin', 'astra', '1.0.0', '1.1.0'), item('plugin', n % 2 ? 'woocommerce' : 'akismet', '8.0.0', '8.0.1', { update_vulnerable: n === 3 })],
    },
  });
  return {
    company: COMPANY,
    environments: [env(1, 'a', 'live'), env(2, 'a', 'staging'), env(3, 'b', 'live'), env(4, 'b', 'staging')],
    listed: { theme: { count: 1 }, plugin: { count: 3 } },
  };
}

function plan(tasks: string, extra: { releases?: boolean; staging?: StagingTable } = {}) {
  const playbook = parsePlaybook(`version: 1\nname: t\ncompany: ${COMPANY}\ntasks:\n${tasks}`, 'pb.yaml', { env: {} });
  // astra the plugin 1.1.0 was first seen two days ago; astra the theme 4.0.1 ten days ago.
  const firstSeen = FirstSeen.of([
    { plugin: 'astra', version: '1.1.0', at: NOW - 2 * DAY },
    { theme: 'astra', version: '4.0.1', at: NOW - 10 * DAY },
    { plugin: 'woocommerce', version: '8.0.1', at: NOW - 10 * DAY },
    { plugin: 'akismet', version: '8.0.1', at: NOW - 10 * DAY },
  ]);
  return buildPlan({
    playbook,
    inventory: inventory(),
    date: '2026-11-20',
    ...(extra.releases ? { releases: { now: NOW, firstSeen } } : {}),
    ...(extra.staging ? { staging: { now: NOW, table: extra.staging } } : {}),
  });
}

describe('plugins.update on one model of an installed item', () => {
  it('one bulk update an environment, its body under `plugins`; a vulnerable update is left alone and named', () => {
    const p = plan('  - name: p\n    action: plugins.update\n    target: { environment: live }\n');
    expect(p.steps.map((s) => [s.endpoint, s.path.replace(/[0-9a-f-]{36}/, 'E'), s.body])).toEqual([
      ['bulkUpdatePlugins', '/sites/environments/E/plugins/bulk-update', { plugins: [{ name: 'astra' }, { name: 'woocommerce' }] }],
      ['bulkUpdatePlugins', '/sites/environments/E/plugins/bulk-update', { plugins: [{ name: 'astra' }] }],
    ]);
    expect(p.steps[1]!.note).toBe('left alone: woocommerce: update 8.0.0 → 8.0.1 flagged vulnerable');
    expect(p.inventory).toEqual({ environments: 4, themes: 1, plugins: 3 });
  });

  it('release age is kept by kind: the theme astra has aged, the plugin astra has not; a judged version goes pinned', () => {
    const p = plan('  - name: p\n    action: plugins.update\n    target: { environment: live }\n    with: { min_release_age: 3d }\n', { releases: true });
    const live1 = p.steps.filter((s) => s.target.env_id === id(1));
    expect(live1.map((s) => [s.endpoint, s.body])).toEqual([['updatePlugin', { name: 'woocommerce', update_version: '8.0.1' }]]);
    expect(live1[0]!.release_age).toEqual([
      expect.objectContaining({ plugin: 'astra', code: 'age_pending', installed: '1.0.0', version: '1.1.0', eligible_at: new Date(NOW + DAY).toISOString() }),
    ]);
    expect(live1[0]!.release_age![0]).not.toHaveProperty('theme');
    const themes = plan('  - name: t\n    action: themes.update\n    target: { environment: live }\n    with: { min_release_age: 3d }\n', { releases: true });
    expect(themes.steps.map((s) => s.body)).toEqual([
      { name: 'astra', update_version: '4.0.1' },
      { name: 'astra', update_version: '4.0.1' },
    ]);
  });

  it('staging first for plugins: staged on staging, pinned, the decisions naming the plugin', () => {
    const staged = plan('  - name: p\n    action: plugins.update\n    target: all\n    with: { plugins: [astra] }\n    rollout: { staging_first: true }\n', {
      staging: StagingTable.of([]),
    });
    expect(staged.steps.map((s) => [s.target.environment, s.role, s.body])).toEqual([
      ['staging', 'staging', { name: 'astra', update_version: '1.1.0' }],
      ['staging', 'staging', { name: 'astra', update_version: '1.1.0' }],
    ]);
    expect(staged.steps[0]!.staging).toEqual([expect.objectContaining({ code: 'staged', plugin: 'astra', version: '1.1.0' })]);
    // What staging ran is kept by kind: a theme's record says nothing of the plugin of the same slug.
    const table = StagingTable.of([{ env_id: id(4), theme: 'astra', version: '1.1.0', kind: 'healthy', at: NOW - DAY }]);
    expect(table.get(id(4), { kind: 'theme', name: 'astra' }, '1.1.0')).toEqual({ healthy: NOW - DAY });
    expect(table.get(id(4), { kind: 'plugin', name: 'astra' }, '1.1.0')).toBeUndefined();
  });

  it('a selector may pick by plugin (`plugin:`, in exclude too): the plan then reads the plugin listing, of every environment where it is read one by one', () => {
    const p = plan('  - name: t\n    action: themes.update\n    target: { plugin: "woo*" }\n');
    expect(p.steps.map((s) => s.target.env_id)).toEqual([id(1), id(3)]);
    const excluded = plan('  - name: t\n    action: themes.update\n    target: { environment: "*", exclude: { plugin: akismet } }\n');
    expect(excluded.steps.map((s) => s.target.env_id)).toEqual([id(1), id(3)]);
    const playbook = parsePlaybook(
      `version: 1\nname: t\ncompany: ${COMPANY}\ntasks:\n  - name: t\n    action: themes.update\n    target: { exclude: { plugin: x } }\n`,
      'pb.yaml',
      {
        env: {},
      },
    );
    expect(kindsNeeded(playbook)).toEqual(['plugin']);
    expect(itemReadsNeeded(playbook, inventory(), 'plugin')).toHaveLength(4);
    const themesOnly = parsePlaybook(`version: 1\nname: t\ncompany: ${COMPANY}\ntasks:\n  - name: t\n    action: themes.update\n    target: all\n`, 'pb.yaml', {
      env: {},
    });
    expect(kindsNeeded(themesOnly)).toEqual([]);
  });
});
