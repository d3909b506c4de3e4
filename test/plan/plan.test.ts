import type { Kind } from '../../src/inventory/kinds.js';
import { describe, expect, it } from 'vitest';
import { InvalidInputError } from '../../src/errors.js';
import type { Environment, InstalledItem, Inventory } from '../../src/inventory/inventory.js';
import { foldThemes } from '../../src/inventory/inventory.js';
import { FirstSeen } from '../../src/inventory/first-seen.js';
import { readInventory } from '../../src/inventory/read.js';
import { parsePlaybook } from '../../src/playbook/load.js';
import { buildPlan } from '../../src/plan/plan.js';

const COMPANY = '0f1e2d3c-4b5a-4697-8877-665544332211';
const id = (n: number) => `00000000-0000-4000-8000-${String(n).padStart(12, '0')}`;

function theme(name: string, o: Partial<InstalledItem> = {}): InstalledItem {
  return {
    kind: 'theme',
    name,
    status: 'active',
    version: '1.0.0',
    version_vulnerable: false,
    update_available: false,
    update_version: '',
    update_vulnerable: false,
    update_status: 'none',
    auto_update_type: 'none',
    ...o,
  };
}

function env(n: number, site: string, name: string, themes: InstalledItem[] = [theme('astra')]): Environment {
  return { id: id(n), site, name, items: { theme: themes } };
}

const inventory: Inventory = {
  company: COMPANY,
  listed: { theme: { count: 3 } },
  environments: [
    env(1, 'acme-001', 'live', [
      theme('astra', { update_available: true, update_version: '1.2.0' }),
      theme('neve', { status: 'inactive', update_available: true, update_version: '3.0.0', update_vulnerable: true }),
    ]),
    env(2, 'acme-001', 'staging', [theme('astra')]),
    env(3, 'blue-002', 'live', [theme('neve', { update_available: true, update_version: '3.0.0', update_vulnerable: true })]),
    env(4, 'legacy-003', 'live', [theme('astra', { update_available: true, update_version: '1.2.0' })]),
  ],
};

function plan(yaml: string, inv = inventory) {
  const playbook = parsePlaybook(`version: 1\nname: t\ncompany: ${COMPANY}\n${yaml}`, 'pb.yaml', { env: process.env });
  return buildPlan({ playbook, inventory: inv, date: '2026-11-22' });
}

describe('planner', () => {
  it('is a pure function: the same inputs give the same plan, byte for byte', () => {
    const yaml = 'tasks:\n  - name: b\n    action: backups.create\n    target: all\n    with: { tag: "n-{{date}}-{{site}}-{{env}}" }\n';
    expect(JSON.stringify(plan(yaml))).toBe(JSON.stringify(plan(yaml)));
    expect(plan(yaml).steps.map((s) => s.body)).toEqual([
      { tag: 'n-2026-11-22-acme-001-live' },
      { tag: 'n-2026-11-22-acme-001-staging' },
      { tag: 'n-2026-11-22-blue-002-live' },
      { tag: 'n-2026-11-22-legacy-003-live' },
    ]);
  });

  it('selects by site, environment and theme globs, ids, and exclude', () => {
    const targets = (target: string) =>
      plan(`tasks:\n  - name: b\n    action: backups.create\n    target: ${target}\n    with: { tag: x }\n`).steps.map(
        (s) => `${s.target.site}/${s.target.environment}`,
      );
    expect(targets('{ environment: live, exclude: { site: "legacy-*" } }')).toEqual(['acme-001/live', 'blue-002/live']);
    expect(targets('{ site: ["acme-*", "BLUE-*"] }')).toEqual(['acme-001/live', 'acme-001/staging', 'blue-002/live']);
    expect(targets('{ theme: neve }')).toEqual(['acme-001/live', 'blue-002/live']);
    expect(targets(`{ ids: ["${id(2)}", "${id(4)}"] }`)).toEqual(['acme-001/staging', 'legacy-003/live']);
    expect(targets('{ site: "nothing-*" }')).toEqual([]);
  });

  it('themes.update lists only available updates, leaves vulnerable ones alone by default, and skips with a reason', () => {
    const p = plan('tasks:\n  - name: t\n    action: themes.update\n    target: all\n');
    expect(p.steps.map((s) => [s.target.site, s.target.environment, s.method, s.path, s.body, s.idempotent])).toEqual([
      ['acme-001', 'live', 'PUT', `/sites/environments/${id(1)}/themes/bulk-update`, { themes: [{ name: 'astra' }] }, true],
      ['legacy-003', 'live', 'PUT', `/sites/environments/${id(4)}/themes/bulk-update`, { themes: [{ name: 'astra' }] }, true],
    ]);
    expect(p.steps[0]!.note).toBe('left alone: neve: update 1.0.0 → 3.0.0 flagged vulnerable');
    expect(p.skipped.map((s) => [s.target.site, s.target.environment, s.reason])).toEqual([
      ['acme-001', 'staging', 'no theme update available'],
      ['blue-002', 'live', 'left alone: neve: update 1.0.0 → 3.0.0 flagged vulnerable'],
    ]);
    const all = plan('tasks:\n  - name: t\n    action: themes.update\n    target: all\n    with: { skip_vulnerable_updates: false, themes: ["ne*"] }\n');
    expect(all.steps.map((s) => [s.target.site, s.body])).toEqual([
      ['acme-001', { themes: [{ name: 'neve' }] }],
      ['blue-002', { themes: [{ name: 'neve' }] }],
    ]);
  });

  it('themes.update policies: only_vulnerable and max_bump leave updates alone, each theme with its reason', () => {
    const policy = (w: string) =>
      plan(`tasks:\n  - name: t\n    action: themes.update\n    target: all\n    with: ${w}\n`, {
        ...inventory,
        environments: [
          env(1, 'acme-001', 'live', [
            theme('astra', { version: '4.1.0', update_available: true, update_version: '4.1.1', version_vulnerable: true }),
            theme('kadence', { version: '4.1.0', update_available: true, update_version: '4.2.0' }),
            theme('neve', { version: '1.0-beta', update_available: true, update_version: '1.0', version_vulnerable: true }),
          ]),
        ],
      });
    // A bulk update names its themes; a pinned one (max_bump judged the version) one theme and the version judged.
    const sent = (p: ReturnType<typeof plan>) =>
      p.steps.map((s) => {
        const body = s.body as { themes?: { name: string }[]; name?: string; update_version?: string };
        return body.themes ? body.themes.map((t) => t.name) : [`${body.name} ${body.update_version}`];
      });
    const patch = policy('{ max_bump: patch }');
    expect(sent(patch)).toEqual([['astra 4.1.1']]);
    expect(patch.steps[0]).toMatchObject({ endpoint: 'updateTheme', method: 'PUT', path: `/sites/environments/${id(1)}/themes`, id: `0:${id(1)}:theme=astra` });
    expect(patch.steps[0]!.note).toBe(
      'left alone: kadence: minor update 4.1.0 → 4.2.0 beyond max_bump: patch; neve: update 1.0-beta → 1.0 not numbered as 1.2 or 1.2.3, beyond max_bump: patch',
    );
    expect(patch.steps[0]!.precondition).toBe('astra 4.1.0 → 4.1.1');
    expect(sent(policy('{ max_bump: minor }'))).toEqual([['astra 4.1.1'], ['kadence 4.2.0']]);
    // No policy that judges the version: one bulk update, as before.
    expect(sent(policy('{}'))).toEqual([['astra', 'kadence', 'neve']]);
    const security = policy('{ only_vulnerable: true }');
    expect(sent(security)).toEqual([['astra', 'neve']]);
    expect(security.steps[0]!.note).toBe('left alone: kadence: installed version 4.1.0 not vulnerable');
    const none = policy('{ only_vulnerable: true, max_bump: patch, themes: ["n*", "k*"] }');
    expect(none.steps).toEqual([]);
    expect(none.skipped.map((s) => s.reason)).toEqual([
      'left alone: kadence: installed version 4.1.0 not vulnerable; neve: update 1.0-beta → 1.0 not numbered as 1.2 or 1.2.3, beyond max_bump: patch',
    ]);
  });

  it('themes.update with a release age: judged at the time and table given, each decision on its step or skip; never planned without them', () => {
    const yaml = 'tasks:\n  - name: t\n    action: themes.update\n    target: all\n    with: { min_release_age: 3d, skip_vulnerable_updates: false }\n';
    const playbook = parsePlaybook(`version: 1\nname: t\ncompany: ${COMPANY}\n${yaml}`, 'pb.yaml', { env: {} });
    const T0 = Date.parse('2026-11-20T02:00:00.000Z');
    const firstSeen = FirstSeen.of([
      { theme: 'astra', version: '1.2.0', at: T0 - 5 * 86_400_000 },
      { theme: 'neve', version: '3.0.0', at: T0 },
    ]);
    const p = buildPlan({ playbook, inventory, date: '2026-11-20', releases: { now: T0, firstSeen } });
    // astra aged: sent; neve is a day old: held, with its date, on the step that sends astra and on the skip.
    // The aged version is the one sent: pinned, so that a newer release cannot take its place.
    expect(p.steps.map((s) => [s.target.site, s.body])).toEqual([
      ['acme-001', { name: 'astra', update_version: '1.2.0' }],
      ['legacy-003', { name: 'astra', update_version: '1.2.0' }],
    ]);
    expect(p.steps[1]!.release_age).toBeUndefined();
    const held = p.skipped.find((s) => s.target.site === 'blue-002')!.release_age;
    expect(p.steps[0]!.release_age).toEqual(held);
    expect(held).toEqual([
      {
        theme: 'neve',
        code: 'age_pending',
        held: true,
        installed: '1.0.0',
        version: '3.0.0',
        first_seen: '2026-11-20T02:00:00.000Z',
        eligible_at: '2026-11-23T02:00:00.000Z',
        override: 'lower with.min_release_age to take it sooner',
      },
    ]);
    expect(() => buildPlan({ playbook, inventory, date: '2026-11-20' })).toThrow('the plan needs `releases`');
  });

  it('refuses a templated body that breaks the API rules, naming the field and target', () => {
    // Valid for the stand-in environment `validate` fills templates with, invalid for this fleet's
    // sites: only the planner, with the real inventory, can see it.
    const sites = { ...inventory, environments: inventory.environments.map((e) => ({ ...e, site: `${e.site}_x` })) };
    const attempt = () => plan('tasks:\n  - name: d\n    action: domains.add\n    target: all\n    with: { domain_name: "{{site}}.example.org" }\n', sites);
    expect(attempt).toThrow(InvalidInputError);
    try {
      attempt();
    } catch (error) {
      const p = (error as InvalidInputError).problems[0]!;
      expect([p.file, p.line, p.path]).toEqual(['pb.yaml', 8, 'tasks.0.with.domain_name']);
      expect(p.message).toMatch(/^domain_name: "acme-001_x.example.org" is not a valid domain name \(for acme-001_x\/live\)$/);
    }
  });

  it('keeps secrets as ${VAR} references in the plan', () => {
    const playbook = parsePlaybook(
      `version: 1\nname: t\ncompany: ${COMPANY}\ntasks:\n  - name: e\n    action: environments.create\n    with: { site_id: "${id(9)}", display_name: dev, admin_password: "\${DEV_PASSWORD}" }\n`,
      'pb.yaml',
      { env: { DEV_PASSWORD: 'correct horse battery' }, requireEnv: true },
    );
    const p = buildPlan({ playbook, inventory, date: '2026-11-22', env: { DEV_PASSWORD: 'correct horse battery' } });
    expect(p.steps[0]!.body).toEqual({ display_name: 'dev', admin_password: '${DEV_PASSWORD}' });
    expect(JSON.stringify(p)).not.toContain('correct horse');
    expect(p.steps[0]!.idempotent).toBe(false);
  });
});

describe('inventory', () => {
  it('pages until total, advancing by what came back, and folds themes into environments', async () => {
    const themes = ['a', 'b', 'c', 'd', 'e'].map((name, i) => ({
      name,
      title: name,
      description: '',
      latest_version: '2.0.0',
      is_latest_version_vulnerable: false,
      environment_count: 1,
      update_count: 0,
      environments: [
        {
          id: id(i % 2),
          site_display_name: `s${i % 2}`,
          display_name: 'live',
          theme_status: 'active',
          theme_update: i === 4 ? 'available' : 'none',
          theme_version: '1.0.0',
          is_theme_version_vulnerable: false,
          theme_update_version: '2.0.0',
          is_theme_update_version_vulnerable: false,
          theme_update_status: '',
          auto_update_type: '',
        },
      ],
    }));
    const asked: [number, number][] = [];
    const reader = {
      // A server that caps pages at 2 themes whatever the limit asks.
      async listItems(_kind: Kind, _: string, q: { offset: number; limit: number }) {
        asked.push([q.offset, q.limit]);
        return { total: 5, last_updated_at: '2026-01-01T00:00:00.000Z', items: themes.slice(q.offset, q.offset + 2) };
      },
      listEnvironmentItems(): never {
        throw new Error('not read here');
      },
      async listSiteEnvironments() {
        return Promise.resolve([]);
      },
      async listDomains() {
        return { environment: { site_domains: [] } };
      },
      async listBackups() {
        return { environment: { backups: [] } };
      },
    };
    const inv = await readInventory(reader, COMPANY, 100);
    expect(asked).toEqual([
      [0, 100],
      [2, 100],
      [4, 100],
    ]);
    expect(inv.environments.map((e) => [e.site, (e.items.theme ?? []).map((t) => t.name)])).toEqual([
      ['s0', ['a', 'c', 'e']],
      ['s1', ['b', 'd']],
    ]);
    expect(inv.environments[0]!.items.theme!.find((t) => t.name === 'e')!.update_available).toBe(true);
    expect(foldThemes(COMPANY, []).environments).toEqual([]);
  });
});

describe('secrets on the way out', () => {
  it('fills only the secret fields, and only a whole ${VAR} reference, copying only what changes', async () => {
    const { fillSecrets } = await import('../../src/actions/action.js');
    const env = { PW: 's3cret-pass', KEY: 'k', SITEFLEET_TOKEN: 'the-token' };
    const plain = { display_name: 'dev', list: ['a'] };
    expect(fillSecrets(plain, ['admin_password'], env)).toBe(plain);
    const body = { display_name: '${SITEFLEET_TOKEN}', admin_password: '${PW}', nested: [{ key: '${KEY}' }] };
    // A name the service gave (display_name) and anything nested stay as written: they are data.
    expect(fillSecrets(body, ['admin_password'], env)).toEqual({
      display_name: '${SITEFLEET_TOKEN}',
      admin_password: 's3cret-pass',
      nested: [{ key: '${KEY}' }],
    });
    expect(body.admin_password).toBe('${PW}');
    expect(fillSecrets({ admin_password: 'x-${PW}' }, ['admin_password'], env)).toEqual({ admin_password: 'x-${PW}' });
    expect(fillSecrets({ tag: '${PW}' }, undefined, env)).toEqual({ tag: '${PW}' });
  });
});

describe('ids read back are data', () => {
  it('a path parameter of "." or ".." is refused, since a URL would resolve it', async () => {
    const { fillPath } = await import('../../src/api/endpoints.js');
    expect(fillPath('/operations/{id}', { id: 'cli:run-wp-cli-1' })).toBe('/operations/cli%3Arun-wp-cli-1');
    expect(() => fillPath('/operations/{id}', { id: '..' })).toThrow('cannot be ".."');
    expect(() => fillPath('/operations/{id}', { id: '.' })).toThrow('cannot be "."');
  });

  it('a site named constructor or __proto__ finds no site id on Object.prototype', async () => {
    const { attachSiteIds } = await import('../../src/inventory/sites.js');
    const env = (site: string) => ({ id: site, name: 'live', site, themes: [] }) as unknown as import('../../src/inventory/inventory.js').Environment;
    const inventory = { environments: [env('constructor'), env('toString'), env('acme')] } as unknown as import('../../src/inventory/inventory.js').Inventory;
    attachSiteIds(inventory, { acme: '7d0f3a9e-1b2c-4d5e-8f90-a1b2c3d4e5f6' });
    expect(inventory.environments.map((e) => e.site_id)).toEqual([undefined, undefined, '7d0f3a9e-1b2c-4d5e-8f90-a1b2c3d4e5f6']);
  });
});

describe('the environment a site call changes or occupies comes from its action, never from a body field', () => {
  const SITE = '00000000-0000-4000-8000-0000000000aa';
  const plan = (task: string) =>
    buildPlan({
      playbook: parsePlaybook(`version: 1\nname: t\ncompany: ${COMPANY}\ntasks:\n${task}`, 'pb.yaml', { env: {} }),
      inventory: { ...inventory, environments: inventory.environments.map((e) => (e.site === 'acme-001' ? { ...e, site_id: SITE } : e)) },
      date: '2026-11-24',
    });

  it('a push names its target environment (and is locked on it); a clone is locked on its source', () => {
    const push = plan(
      `  - name: push\n    action: environments.push\n    target: { site: acme-001 }\n    with: { source_environment: staging, target_environment: live }\n`,
    );
    expect(push.steps.map((s) => [s.target.env_id, s.lock])).toEqual([[id(1), id(1)]]);
    const clone = plan(
      `  - name: clone\n    action: environments.clone\n    target: { site: acme-001 }\n    with: { source_environment: live, display_name: copy }\n`,
    );
    expect(clone.steps.map((s) => [s.target.env_id, s.lock])).toEqual([[undefined, id(1)]]);
  });

  it('once on with.site_id: the same, from the ids the task gives', () => {
    const push = plan(`  - name: push\n    action: environments.push\n    with: { site_id: ${SITE}, source_env_id: "${id(2)}", target_env_id: "${id(1)}" }\n`);
    expect(push.steps.map((s) => [s.target, s.lock])).toEqual([[{ site_id: SITE, env_id: id(1) }, id(1)]]);
  });
});
