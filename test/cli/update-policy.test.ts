import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { Exposure } from '../../src/inventory/exposure.js';
import type { Plan } from '../../src/plan/plan.js';
import type { Report } from '../../src/report/report.js';
import type { Simulator } from '../../src/sim/server.js';
import { runCli, simEnv, tempDir, writePlaybook } from '../helpers/cli.js';
import { useSimulator } from '../helpers/sim.js';
import { expectSafeTerminal } from '../helpers/sinks.js';
import { parse as parseCsv } from '../../src/inventory/csv.js';
import { HOSTILE_NAMES } from '../../src/sim/hostile-names.js';
import { installed, shapeFleet, withoutPlugins, type Catalog } from '../helpers/themes.js';

/** The exposure's themes (the simulator's plugins are exposed too, apart). */
function themesOf(exposure: Exposure): { theme: string; environments: Exposure['items'][number]['environments'] }[] {
  return exposure.items.flatMap((t) => ('theme' in t ? [t] : []));
}

const start = useSimulator();

/**
 * A catalogue with one theme for each case a policy judges; every install starts at the oldest
 * version, so the update offered is the newest. `current` is vulnerable with nothing to update to.
 */
const CATALOG: Catalog = {
  'patch-plain': { versions: ['4.1.0', '4.1.1'], vulnerable: [] },
  'patch-sec': { versions: ['2.0', '2.0.1'], vulnerable: ['2.0'] },
  'minor-sec': { versions: ['4.1.0', '4.2.0'], vulnerable: ['4.1.0'] },
  'major-plain': { versions: ['1.9.3', '2.0.0'], vulnerable: [] },
  'beta-sec': { versions: ['1.0-beta', '1.0'], vulnerable: ['1.0-beta'] },
  'bad-update': { versions: ['3.0.0', '3.0.1'], vulnerable: ['3.0.0', '3.0.1'] },
  current: { versions: ['5.0.0'], vulnerable: ['5.0.0'] },
};
const NAMES = Object.keys(CATALOG);

function playbook(withBlock: string, dir = tempDir()): string {
  return writePlaybook(
    `version: 1\nname: security\nsettings: { rate_limit: 50/s, wait: true }\ntasks:\n  - name: themes\n    action: themes.update\n    target: all\n    verify: true\n    with: ${withBlock}\n`,
    dir,
  );
}

async function run(sim: Simulator, withBlock: string): Promise<{ code: number | null; stdout: string; report: Report }> {
  const dir = tempDir();
  const reportPath = join(dir, 'r.json');
  const result = await runCli(['run', playbook(withBlock, dir), '--yes', '--poll-interval', '20', '--report', reportPath], simEnv(sim));
  return { code: result.code, stdout: result.stdout, report: JSON.parse(readFileSync(reportPath, 'utf8')) as Report };
}

interface Policy {
  with: string;
  /** The themes whose update goes out. */
  sent: string[];
  /** The themes left alone, each with the reason the plan gives (themes neither sent nor held are not selected or have no update). */
  held: Record<string, string>;
}

const VULNERABLE_UPDATE = 'update 3.0.0 → 3.0.1 flagged vulnerable';
const POLICIES: Record<string, Policy> = {
  'default (max_bump: major)': {
    with: '{}',
    sent: ['patch-plain', 'patch-sec', 'minor-sec', 'major-plain', 'beta-sec'],
    held: { 'bad-update': VULNERABLE_UPDATE },
  },
  'max_bump: patch': {
    with: '{ max_bump: patch }',
    sent: ['patch-plain', 'patch-sec'],
    held: {
      'minor-sec': 'minor update 4.1.0 → 4.2.0 beyond max_bump: patch',
      'major-plain': 'major update 1.9.3 → 2.0.0 beyond max_bump: patch',
      'beta-sec': 'update 1.0-beta → 1.0 not numbered as 1.2 or 1.2.3, beyond max_bump: patch',
      'bad-update': VULNERABLE_UPDATE,
    },
  },
  'max_bump: minor': {
    with: '{ max_bump: minor }',
    sent: ['patch-plain', 'patch-sec', 'minor-sec'],
    held: {
      'major-plain': 'major update 1.9.3 → 2.0.0 beyond max_bump: minor',
      'beta-sec': 'update 1.0-beta → 1.0 not numbered as 1.2 or 1.2.3, beyond max_bump: minor',
      'bad-update': VULNERABLE_UPDATE,
    },
  },
  only_vulnerable: {
    with: '{ only_vulnerable: true }',
    sent: ['patch-sec', 'minor-sec', 'beta-sec'],
    held: {
      'patch-plain': 'installed version 4.1.0 not vulnerable',
      'major-plain': 'installed version 1.9.3 not vulnerable',
      'bad-update': VULNERABLE_UPDATE,
    },
  },
  'only_vulnerable, max_bump: patch, themes globs': {
    with: '{ only_vulnerable: true, max_bump: patch, themes: ["*-sec", "bad-*"] }',
    sent: ['patch-sec'],
    held: {
      'minor-sec': 'minor update 4.1.0 → 4.2.0 beyond max_bump: patch',
      'beta-sec': 'update 1.0-beta → 1.0 not numbered as 1.2 or 1.2.3, beyond max_bump: patch',
      'bad-update': VULNERABLE_UPDATE,
    },
  },
  'only_vulnerable, skip_vulnerable_updates: false': {
    with: '{ only_vulnerable: true, skip_vulnerable_updates: false }',
    sent: ['patch-sec', 'minor-sec', 'beta-sec', 'bad-update'],
    held: { 'patch-plain': 'installed version 4.1.0 not vulnerable', 'major-plain': 'installed version 1.9.3 not vulnerable' },
  },
};

describe('themes.update policies against the simulator', () => {
  it.each(Object.entries(POLICIES))('%s sends exactly the updates it allows and says why for the rest', async (_name, policy) => {
    const { sim } = await start({ sites: 8, seed: 3 });
    shapeFleet(sim, CATALOG);
    withoutPlugins(sim);
    const before = installed(sim);
    const { code, stdout, report } = await run(sim, policy.with);
    expect(code).toBe(0);
    const after = installed(sim);
    // What moved in the simulator is every install of an allowed theme, to its newest version, and nothing else.
    const moved = [...before].filter(([key, version]) => after.get(key) !== version).map(([key]) => key);
    const expected = [...before.keys()].filter((key) => policy.sent.includes(key.split(' ')[1]!));
    expect(moved.sort()).toEqual(expected.sort());
    for (const key of moved) expect(after.get(key)).toBe(CATALOG[key.split(' ')[1]!]!.versions.at(-1));
    expect(moved.length).toBeGreaterThan(0);
    // Each environment's result names each theme held back there, with its reason, and no other theme.
    for (const env of sim.fleet.environments.values()) {
      const result = report.results.find((r) => r.target.env_id === env.id)!;
      const themes = [...env.themes.keys()];
      const sends = themes.some((t) => policy.sent.includes(t));
      expect(result.status).toBe(sends ? 'succeeded' : 'skipped');
      for (const theme of NAMES) {
        const mention = `${theme}: `;
        if (themes.includes(theme) && theme in policy.held) expect(result.reason).toContain(`${theme}: ${policy.held[theme]}`);
        else expect(result.reason ?? '').not.toContain(mention);
      }
      if (!sends && !themes.some((t) => t in policy.held)) expect(result.reason).toBe('no theme update available');
    }
    // The summary says it too: each theme's reason once, with how many environments it was left alone on.
    for (const [theme, reason] of Object.entries(policy.held)) {
      const on = [...sim.fleet.environments.values()].filter((env) => env.themes.has(theme)).length;
      expect(stdout).toContain(`why (themes), ${on} environment${on === 1 ? '' : 's'}: left alone: ${theme}: ${reason}\n`);
    }
  });

  it('plan -v shows each held theme with its reason, and the saved plan holds the versions the policy judged', async () => {
    const { sim } = await start({ sites: 8, seed: 3 });
    shapeFleet(sim, CATALOG);
    withoutPlugins(sim);
    const dir = tempDir();
    const file = playbook('{ max_bump: patch }', dir);
    const planFile = join(dir, 'plan.json');
    const planned = await runCli(['plan', file, '-v', '--out', planFile], simEnv(sim));
    expect(planned.code).toBe(0);
    // max_bump judged each version: each theme goes by the pinned update, naming it.
    expect(planned.stdout).toMatch(
      /\/themes \{"name":"patch-(plain|sec)","update_version":"(4\.1\.1|2\.0\.1)"\}.*# left alone: .*minor-sec: minor update 4\.1\.0 → 4\.2\.0 beyond max_bump: patch/,
    );
    expect(planned.stdout).not.toContain('bulk-update');
    expect(planned.stdout).toMatch(/skip \S+ \(themes\): left alone: .*bad-update: update 3\.0\.0 → 3\.0\.1 flagged vulnerable/);
    const plan = JSON.parse(readFileSync(planFile, 'utf8')) as Plan;
    for (const step of plan.steps) expect(step.precondition).toMatch(/^(patch-plain 4\.1\.0 → 4\.1\.1|patch-sec 2\.0 → 2\.0\.1)$/);

    // A new patch release of patch-sec moves the judged versions; minor-sec's newest becomes a patch the policy would now take.
    sim.fleet.catalog.get('patch-sec')!.versions.push('2.0.2');
    sim.fleet.catalog.get('minor-sec')!.versions.splice(1, 1, '4.1.5');
    const reportPath = join(dir, 'r.json');
    const applied = await runCli(['run', '--plan', planFile, '--yes', '--poll-interval', '20', '--report', reportPath], simEnv(sim));
    expect(applied.code).toBe(0);
    const report = JSON.parse(readFileSync(reportPath, 'utf8')) as Report;
    const themeOf = (step: { body?: unknown }) => (step.body as { name: string }).name;
    for (const step of plan.steps) {
      // The body names the version: a judgement that moved changes the request itself, and that step is not sent.
      if (themeOf(step) === 'patch-sec') {
        const skip = report.results.filter((r) => r.step_id === null && r.target.env_id === step.target.env_id && r.reason?.includes('"name":"patch-sec"'));
        expect(skip).toHaveLength(1);
        expect(skip[0]!.reason).toMatch(/^changed since the plan: the body is now .*"update_version":"2\.0\.2"/);
      } else {
        const result = report.results.find((r) => r.step_id === step.id)!;
        // patch-plain's judgement held: sent, and read back at the version judged, whatever else the environment is offered now.
        expect(result.status).toBe('succeeded');
        expect(result.runs).toEqual([{ name: 'patch-plain', version: '4.1.1' }]);
      }
    }
    // Only the steps whose judgement still held were sent (minor-sec's new update was never reviewed: not sent), and no more.
    const sent = sim.log.filter((e) => e.endpoint === 'updateTheme').map((e) => `${e.path.split('/').at(-2)} ${(e.body as { name: string }).name}`);
    const held = plan.steps.filter((s) => themeOf(s) === 'patch-plain');
    expect(sent.sort()).toEqual(held.map((s) => `${s.target.env_id} patch-plain`).sort());
    expect(sim.log.filter((e) => e.endpoint === 'bulkUpdateThemes')).toEqual([]);
    expect(held.length).toBeGreaterThan(0);
  });
});

describe('inventory --exposure', () => {
  /** Environments with a vulnerable installed version whose update is offered and not flagged. */
  const fixable = (sim: Simulator) =>
    [...sim.fleet.environments.values()].filter((env) =>
      [...env.themes].some(([name, t]) => {
        const theme = sim.fleet.catalog.get(name)!;
        const latest = theme.versions.at(-1)!;
        return theme.vulnerable.has(t.version) && t.version !== latest && !theme.vulnerable.has(latest);
      }),
    ).length;

  it('--fail-on vulnerable exits 1 while an environment runs a vulnerable version with a safe update, and 0 once the security night took them', async () => {
    const { sim } = await start({ sites: 8, seed: 3 });
    shapeFleet(sim, CATALOG);
    withoutPlugins(sim);
    expect(fixable(sim)).toBeGreaterThan(0);
    const json = await runCli(['inventory', '--exposure', '--format', 'json'], simEnv(sim));
    expect(json.code).toBe(0);
    const exposure = JSON.parse(json.stdout) as Exposure;
    expect(exposure.fixable_environments).toBe(fixable(sim));
    expect(themesOf(exposure).map((t) => t.theme)).toEqual(['bad-update', 'beta-sec', 'current', 'minor-sec', 'patch-sec']);
    const bad = themesOf(exposure).find((t) => t.theme === 'bad-update')!.environments[0]!;
    expect([bad.version, bad.update, bad.update_vulnerable, bad.safe_update]).toEqual(['3.0.0', '3.0.1', true, false]);
    const current = themesOf(exposure).find((t) => t.theme === 'current')!.environments[0]!;
    expect([current.update, current.safe_update]).toEqual([null, false]);

    const failing = await runCli(['inventory', '--exposure', '--fail-on', 'vulnerable'], simEnv(sim));
    expect(failing.code).toBe(1);
    expect(failing.stdout).toContain(
      `${exposure.installs} vulnerable installs of 5 themes on ${exposure.environments} environments; ${fixable(sim)} environments have a safe update available`,
    );
    const csv = await runCli(['inventory', '--exposure', '--fail-on', 'vulnerable', '--format', 'csv'], simEnv(sim));
    expect(csv.code).toBe(1);
    expect(csv.stdout.trimEnd().split('\n')).toHaveLength(1 + exposure.installs);
    // Then when the update was first seen, and whether it may go (no min_release_age asked: at once).
    expect(csv.stdout).toMatch(/^theme,bad-update,[^,\n]+,[^,\n]+,[0-9a-f-]{36},3\.0\.0,3\.0\.1,yes,no,\d{4}-\d\d-\d\dT[\d:.]+Z,yes$/m);

    // The security night takes exactly the safe updates of vulnerable versions: monitoring is quiet after it.
    const night = await run(sim, '{ only_vulnerable: true }');
    expect(night.code).toBe(0);
    expect(fixable(sim)).toBe(0);
    const quiet = await runCli(['inventory', '--exposure', '--fail-on', 'vulnerable', '--format', 'json'], simEnv(sim));
    expect(quiet.code).toBe(0);
    const left = JSON.parse(quiet.stdout) as Exposure;
    expect(left.fixable_environments).toBe(0);
    expect(themesOf(left).map((t) => t.theme)).toEqual(['bad-update', 'current']);
  });

  it('one environment with a safe update is enough to exit 1; a fleet with nothing vulnerable says so and exits 0', async () => {
    const { sim } = await start({ sites: 3, seed: 4 });
    shapeFleet(sim, { plain: { versions: ['1.0.0', '1.1.0'], vulnerable: [] }, held: { versions: ['2.0.0', '2.1.0'], vulnerable: ['2.0.0', '2.1.0'] } });
    withoutPlugins(sim);
    const [first] = sim.fleet.environments.values();
    const args = ['inventory', '--exposure', '--fail-on', 'vulnerable'];
    expect((await runCli(args, simEnv(sim))).code).toBe(0);
    first!.themes.get('plain')!.version = '0.9';
    sim.fleet.catalog.get('plain')!.vulnerable.add('0.9');
    const one = await runCli(args, simEnv(sim));
    expect(one.code).toBe(1);
    expect(one.stdout).toMatch(/; 1 environment has a safe update available$/m);
    for (const env of sim.fleet.environments.values()) env.themes.delete('held');
    first!.themes.get('plain')!.version = '1.1.0';
    const none = await runCli(args, simEnv(sim));
    expect([none.code, none.stdout]).toEqual([0, 'no environment runs a theme or plugin version flagged vulnerable\n']);
  });

  it('--fail-on without --exposure is refused before anything is read', async () => {
    const { sim } = await start({ sites: 2 });
    const result = await runCli(['inventory', '--fail-on', 'vulnerable'], simEnv(sim));
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('--fail-on: judges the exposure view: add --exposure');
    expect(sim.log).toEqual([]);
  });

  it('hostile site names reach the table and the CSV made safe, and JSON exactly', async () => {
    const { sim } = await start({ sites: 8, seed: 3, names: 'hostile' });
    shapeFleet(sim, CATALOG);
    withoutPlugins(sim);
    const table = await runCli(['inventory', '--exposure'], simEnv(sim));
    expect(table.code).toBe(0);
    expectSafeTerminal(table.stdout, 'exposure table');
    const csv = await runCli(['inventory', '--exposure', '--format', 'csv'], simEnv(sim));
    expectSafeTerminal(csv.stdout, 'exposure csv');
    const rows = parseCsv(csv.stdout);
    expect(rows.flat().filter((c) => /^[=+\-@\t\r]/.test(c))).toEqual([]);
    expect(rows.map((r) => r[2])).toContain(`'${HOSTILE_NAMES[1]}`);
    expect(csv.stdout.trimEnd().split('\n')).toHaveLength(rows.length);
    const json = JSON.parse((await runCli(['inventory', '--exposure', '--format', 'json'], simEnv(sim))).stdout) as Exposure;
    const sites = new Set([...sim.fleet.sites.values()].map((s) => s.displayName));
    expect(new Set(themesOf(json).flatMap((t) => t.environments.map((e) => e.site)))).toEqual(sites);
  });
});
