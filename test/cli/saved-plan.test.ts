import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { Plan } from '../../src/plan/plan.js';
import type { Report } from '../../src/report/report.js';
import type { Simulator } from '../../src/sim/server.js';
import { runCli, simEnv, tempDir, writePlaybook } from '../helpers/cli.js';
import { useSimulator } from '../helpers/sim.js';
import { journalPathFor } from '../../src/run/journal.js';

const start = useSimulator();

const PLAYBOOK = `version: 1\nname: themes\nsettings: { rate_limit: 50/s }\ntasks:\n  - { name: themes, action: themes.update, target: all, with: { skip_vulnerable_updates: false } }\n`;

/** Plans into dir/plan.json against the simulator; returns the paths and the plan. */
async function savePlan(sim: Simulator, text = PLAYBOOK) {
  const dir = tempDir();
  const playbook = writePlaybook(text, dir);
  const planFile = join(dir, 'plan.json');
  const planned = await runCli(['plan', playbook, '--out', planFile], simEnv(sim));
  expect(planned.code).toBe(0);
  expect(planned.stdout).toContain(`apply it with \`sitefleet run --plan ${planFile}\``);
  return { dir, playbook, planFile, plan: JSON.parse(readFileSync(planFile, 'utf8')) as Plan };
}

/** The writes the simulator received, as `METHOD path`, sorted. */
const writes = (sim: Simulator) =>
  sim.log
    .filter((e) => e.method !== 'GET')
    .map((e) => `${e.method} ${e.path.replace(/^\/v2/, '')}`)
    .sort();
const stepsOf = (plan: Plan, ids?: Set<string>) =>
  plan.steps
    .filter((s) => !ids || ids.has(s.id))
    .map((s) => `${s.method} ${s.path}`)
    .sort();

describe('saved plans: run --plan', () => {
  it('applies exactly the saved plan: its steps and no others, and the journal names the plan file', async () => {
    const { sim } = await start({ sites: 8, themes: 4, seed: 5 });
    const { dir, planFile, plan } = await savePlan(sim);
    expect(plan.steps.length).toBeGreaterThan(3);
    expect(plan.made?.playbook_sha256).toMatch(/^[0-9a-f]{64}$/);
    const report = join(dir, 'r.json');
    const run = await runCli(['run', '--plan', planFile, '--yes', '--report', report], simEnv(sim));
    expect(run.code).toBe(0);
    expect(run.stdout).toContain(`applying ${planFile}`);
    expect(run.stdout).toContain(`${plan.steps.length} of its ${plan.steps.length} steps still hold`);
    expect(writes(sim)).toEqual(stepsOf(plan));
    const record = JSON.parse(readFileSync(journalPathFor(report), 'utf8').split('\n')[0]!) as { plan_file?: string };
    expect(record.plan_file).toBe(planFile);
  });

  it('drops the steps the fleet changed under (skipped "changed since the plan"), and never adds the ones it now needs', async () => {
    const { sim } = await start({ sites: 10, themes: 4, seed: 6 });
    const { dir, planFile, plan } = await savePlan(sim);
    // A theme of one step got a newer release; someone updated another environment (without that theme) by hand.
    const moved = plan.steps[0]!;
    const theme = (moved.body as { themes: { name: string }[] }).themes[0]!.name;
    sim.fleet.catalog.get(theme)!.versions.push('99.0.0');
    const gone = plan.steps.find((s) => !sim.fleet.environments.get(s.target.env_id!)!.themes.has(theme))!;
    const envA = sim.fleet.environments.get(gone.target.env_id!)!;
    for (const [name, installed] of envA.themes) installed.version = sim.fleet.catalog.get(name)!.versions.at(-1)!;
    // An environment the plan left alone now has an update: not in the plan, not sent.
    const planned = new Set(plan.steps.map((s) => s.target.env_id));
    const idle = [...sim.fleet.environments.values()].find((e) => !planned.has(e.id) && e.themes.size > 0)!;
    const [idleTheme] = [...idle.themes.keys()];
    idle.themes.get(idleTheme!)!.version = sim.fleet.catalog.get(idleTheme!)!.versions[0]!;

    const reportPath = join(dir, 'r.json');
    const run = await runCli(['run', '--plan', planFile, '--yes', '--report', reportPath], simEnv(sim));
    expect(run.code).toBe(0);
    const report = JSON.parse(readFileSync(reportPath, 'utf8')) as Report;
    const changed = report.results.filter((r) => r.reason?.startsWith('changed since the plan: '));
    const byEnv = new Map(changed.map((r) => [r.target.env_id, r.reason]));
    expect(byEnv.get(gone.target.env_id)).toBe('changed since the plan: no theme update available');
    expect(byEnv.get(moved.target.env_id)).toMatch(new RegExp(`^changed since the plan: .*${theme} [^ ]+ → 99\\.0\\.0.*\\(planned: .*${theme} [^ ]+ → `));
    for (const r of changed) expect(r.status).toBe('skipped');
    // Everything else in the plan was sent; nothing outside it was.
    const kept = new Set(plan.steps.filter((s) => !byEnv.has(s.target.env_id)).map((s) => s.id));
    expect(kept.size).toBeGreaterThan(0);
    expect(writes(sim)).toEqual(stepsOf(plan, kept));
    expect(writes(sim).some((w) => w.includes(idle.id))).toBe(false);
    expect(run.stdout).toContain(`${changed.length} changed since the plan: dropped (skipped), not sent`);
    // The new release (and the idle environment) make writes a plan made now would hold: counted, not sent.
    expect(run.stdout).toMatch(/\n {2}\d+ writes the fleet needs now are not in this plan: not sent \(make a new plan to include them\)\n/);
  });

  it('--strict-plan: any change refuses the whole run (exit 2, each change on a line naming the plan file and step), and nothing is sent', async () => {
    const { sim } = await start({ sites: 8, themes: 4, seed: 5 });
    const { planFile, plan } = await savePlan(sim);
    const env = sim.fleet.environments.get(plan.steps[1]!.target.env_id!)!;
    for (const [name, installed] of env.themes) installed.version = sim.fleet.catalog.get(name)!.versions.at(-1)!;
    const run = await runCli(['run', '--plan', planFile, '--strict-plan', '--yes'], simEnv(sim));
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(
      new RegExp(
        `^${planFile.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}:\\d+:\\d+: steps\\.1: changed since the plan \\(themes, .+\\): no theme update available; --strict-plan sends nothing$`,
        'm',
      ),
    );
    expect(run.stderr).toContain('1 problem; nothing was sent');
    expect(writes(sim)).toEqual([]);
  });

  it('refuses (exit 2, before reading the fleet) a plan of another playbook text, another company, or too old', async () => {
    const { sim } = await start({ sites: 6, themes: 4, seed: 5 });
    const { playbook, planFile } = await savePlan(sim);
    const before = sim.log.length;

    const otherCompany = await runCli(['run', '--plan', planFile, '--yes', '--company', '00000000-0000-4000-8000-000000000000'], simEnv(sim));
    expect(otherCompany.code).toBe(2);
    expect(otherCompany.stderr).toContain(`is a plan for company ${sim.companyId}, not 00000000-0000-4000-8000-000000000000`);

    const old = await runCli(['run', '--plan', planFile, '--yes', '--max-plan-age', '1ms'], simEnv(sim));
    expect(old.code).toBe(2);
    expect(old.stderr).toMatch(/was made \d+s ago \(.+\), more than --max-plan-age 0s: make a new plan with `sitefleet plan .+ --out .+` and review it/);

    writeFileSync(playbook, PLAYBOOK.replace('50/s', '40/s'));
    const edited = await runCli(['run', '--plan', planFile, '--yes'], simEnv(sim));
    expect(edited.code).toBe(2);
    expect(edited.stderr).toContain(`was made from another text of ${playbook} (it has changed since the plan was made)`);
    expect(sim.log.length).toBe(before);
  });

  it('a plan file that is not one is exit 2 naming its line and field', async () => {
    const { sim } = await start({ sites: 4, themes: 3, seed: 5 });
    const { planFile, plan } = await savePlan(sim);
    const text = JSON.stringify({ ...plan, steps: plan.steps.map((s, i) => (i === 0 ? { ...s, method: 'DELETE' } : s)) }, null, 2);
    writeFileSync(planFile, text);
    const run = await runCli(['run', '--plan', planFile, '--yes'], simEnv(sim));
    expect(run.code).toBe(2);
    const line = text.split('\n').findIndex((l) => l.includes('"DELETE"')) + 1;
    expect(run.stderr).toMatch(new RegExp(`:${line}:\\d+: steps\\.0\\.method: must be one of "GET", "POST", "PUT"`));
    expect(writes(sim)).toEqual([]);
  });
});

describe('plan --detailed-exitcode', () => {
  it('exits 2 when there is something to send, 0 when there is nothing, 1 on any error', async () => {
    const { sim } = await start({ sites: 6, themes: 4, seed: 5 });
    const dir = tempDir();
    const some = await runCli(['plan', writePlaybook(PLAYBOOK, dir, 'some.yaml'), '--detailed-exitcode'], simEnv(sim));
    expect(some.code).toBe(2);
    const none = await runCli(
      ['plan', writePlaybook(PLAYBOOK.replace('skip_vulnerable_updates: false', "themes: ['no-such-theme']"), dir, 'none.yaml'), '--detailed-exitcode'],
      simEnv(sim),
    );
    expect(none.code).toBe(0);
    const broken = await runCli(
      ['plan', writePlaybook(PLAYBOOK.replace('themes.update', 'themes.updat'), dir, 'broken.yaml'), '--detailed-exitcode'],
      simEnv(sim),
    );
    expect(broken.code).toBe(1);
    expect(broken.stderr).toMatch(/broken\.yaml:5:\d+: tasks\.0\.action/);
    expect(writes(sim)).toEqual([]);
  });
});
